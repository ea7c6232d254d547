import BenchSupport
import Foundation

/// A bar per target of issue #27, in the style of strata-bench's chart: the measured value
/// against its target (dashed line), green where it meets it, red where it does not. Each bar
/// has its own scale (the larger of value and target fills 80 % of the width), as the units
/// differ. The header names the machine, the commit, the date and the load.
func renderSVG(_ header: ReportHeader, _ results: Results) -> String {
    let barHeight = 16.0, rowGap = 10.0
    let left = 230.0, chartWidth = 420.0, right = 250.0
    let width = left + chartWidth + right
    var y = 10.0
    var body = ""
    func text(_ x: Double, _ y: Double, _ content: String, attributes: String = "") -> String {
        "<text x=\"\(svgNumber(x))\" y=\"\(svgNumber(y))\"\(attributes.isEmpty ? "" : " " + attributes)>\(xmlEscape(content))</text>\n"
    }

    body += text(10, y + 14, "strata-cloud-bench: issue #27's sync targets", attributes: "font-size=\"15\" font-weight=\"bold\"")
    y += 32
    body += text(
        10, y, "\(header.machine)\(header.swift.map { " · \($0)" } ?? "") · \(header.date) · commit \(header.commit)",
        attributes: "fill=\"#555\"")
    y += 15
    body += text(10, y, "load average (1, 5, 15 min) \(header.load)", attributes: "fill=\"#555\"")
    y += 15
    body += text(10, y, header.sizes, attributes: "fill=\"#555\"")
    y += 15
    body += text(
        10, y, "each bar on its own scale; dashed line = target; green meets it, red does not", attributes: "fill=\"#555\"")
    y += 22

    for target in Target.all {
        guard let metric = results.metrics.first(where: { $0.name == target.metric }) else { continue }
        let scale = max(metric.value, target.limit) / 0.8
        func x(_ value: Double) -> Double { left + chartWidth * max(0, value) / scale }
        let color = target.met(by: metric.value) ? "#2ca02c" : "#d62728"
        body += text(left - 8, y + barHeight - 4, target.label, attributes: "text-anchor=\"end\"")
        body +=
            "<rect x=\"\(svgNumber(left))\" y=\"\(svgNumber(y))\" width=\"\(svgNumber(max(1, x(metric.value) - left)))\" height=\"\(svgNumber(barHeight))\" fill=\"\(color)\"><title>\(xmlEscape(metric.name))</title></rect>\n"
        body +=
            "<line x1=\"\(svgNumber(x(target.limit)))\" y1=\"\(svgNumber(y - 3))\" x2=\"\(svgNumber(x(target.limit)))\" y2=\"\(svgNumber(y + barHeight + 3))\" stroke=\"black\" stroke-dasharray=\"4 3\"/>\n"
        body += text(
            left + chartWidth + 8, y + barHeight - 4,
            "\(format(metric.value)) \(metric.unit)   (target \(target.comparison) \(format(target.limit)))", attributes: "fill=\"#333\"")
        y += barHeight + rowGap
    }
    y += 10
    return """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(y))" viewBox="0 0 \(Int(width)) \(Int(y))" font-family="Helvetica, Arial, sans-serif" font-size="11">
        <rect width="100%" height="100%" fill="white"/>

        """ + body + "</svg>\n"
}
