//! Text tables: columns left-aligned and two spaces apart, trailing blanks
//! trimmed, widths counted in characters.

use std::io::{self, Write};

/// A table's rows: called with a sink, it hands the sink each row's cells.
pub type Rows<'a> = dyn FnMut(&mut dyn FnMut(&[String])) + 'a;

/// Writes `header` and the rows `rows` produces, and returns how many rows
/// there were; an empty table writes nothing, not even its header.
///
/// `rows` is called twice, first for the widths and then for the text, and
/// hands each row to its argument. Rows can so be built into one reused set
/// of buffers: a table of a million producers never holds its rows.
pub fn write(out: &mut dyn Write, header: &[String], rows: &mut Rows<'_>) -> io::Result<usize> {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    let mut count = 0;
    rows(&mut |cells| {
        count += 1;
        for (w, c) in widths.iter_mut().zip(cells) {
            *w = (*w).max(c.chars().count());
        }
    });
    if count == 0 {
        return Ok(0);
    }
    let mut result = Ok(());
    let mut line = String::new();
    let mut emit = |cells: &[String]| {
        if result.is_err() {
            return;
        }
        line.clear();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            line.push_str(c);
            let pad = w.saturating_sub(c.chars().count());
            line.extend(std::iter::repeat_n(' ', pad));
        }
        let trimmed = line.trim_end();
        result = out
            .write_all(trimmed.as_bytes())
            .and_then(|()| out.write_all(b"\n"));
    };
    emit(header);
    rows(&mut emit);
    result.map(|()| count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_columns() {
        let header = ["A".to_string(), "Bee".into(), "C".into()];
        let data = [["xyz", "1", ""], ["é", "", "z"]];
        let mut out = Vec::new();
        let n = write(&mut out, &header, &mut |f| {
            for row in &data {
                f(&row.map(String::from));
            }
        })
        .unwrap();
        assert_eq!(n, 2);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "A    Bee  C\nxyz  1\né         z\n"
        );
        let mut out = Vec::new();
        assert_eq!(write(&mut out, &header, &mut |_| {}).unwrap(), 0);
        assert!(out.is_empty());
    }
}
