"""The checks of ``polyjudge check`` as JUnit XML, which CI systems (GitHub Actions through a
test-report action, GitLab, Jenkins) show as test results: one ``testcase`` per check, a
``failure`` element for a check that fails."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from .checks import Check


def junit_xml(checks: list[Check], suite: str = "polyjudge check") -> str:
    """The JUnit XML document of ``checks``: a ``testsuites`` root holding one ``testsuite``
    (counts of tests and failures), a ``testcase`` per check (classname ``polyjudge.check.<kind>``,
    name the condition's number and label), its line as ``system-out`` and, when it fails, a
    ``failure`` whose message is the line."""
    failures = sum(not check.passed for check in checks)
    counts = {"tests": str(len(checks)), "failures": str(failures), "errors": "0",
              "skipped": "0"}
    root = ET.Element("testsuites", {"name": suite, **counts})
    testsuite = ET.SubElement(root, "testsuite", {"name": suite, **counts})
    for check in checks:
        case = ET.SubElement(testsuite, "testcase", {
            "classname": f"polyjudge.check.{check.kind}",
            "name": f"{check.number} {check.label}", "file": check.source})
        if not check.passed:
            failure = ET.SubElement(case, "failure", {"message": check.line(), "type": "FAIL"})
            failure.text = check.line()
        ET.SubElement(case, "system-out").text = check.line()
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
