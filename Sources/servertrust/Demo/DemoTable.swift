/// A plain-text table: columns padded to their widest cell, header in bold.
struct DemoTable {
    let header: [String]
    let rows: [[String]]

    /// `colour(row, column, paddedText)` may style a cell after padding, so escape codes never
    /// upset the alignment.
    func render(style: TextStyle, colour: (Int, Int, String) -> String = { _, _, text in text }) -> [String] {
        let widths = header.indices.map { column in
            ([header] + rows).map { $0[column].count }.max() ?? 0
        }
        func line(_ cells: [String], _ styleCell: (Int, String) -> String) -> String {
            cells.enumerated().map { column, cell in
                let padded = column == cells.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
                return styleCell(column, padded)
            }.joined(separator: "  ")
        }
        return [line(header) { _, text in style.bold(text) }]
            + rows.enumerated().map { index, row in line(row) { column, text in colour(index, column, text) } }
    }
}
