//! Text tables: columns left-aligned and two spaces apart, trailing blanks
//! trimmed, widths counted in characters, fitted to the screen.
//!
//! Each table declares its [`Column`]s with a priority; when the rows are
//! wider than the terminal (or `COLUMNS`), the least important columns are
//! shortened (those that hold free text) or left out first, and any line
//! still too long is cut with `…`: a row never wraps. `--output wide` keeps
//! every column, `--columns A,B` picks them, `--no-headers` drops the header
//! line. Without a known width (output piped) every column is printed in full.

use std::io::{self, Write};
use std::sync::OnceLock;

use super::colour::{self, Style};

/// A table's rows: called with a sink, it hands the sink each row's cells
/// (plain `String`s, or [`Cell`]s that carry their style).
pub type Rows<'a, C = String> = dyn FnMut(&mut dyn FnMut(&[C])) + 'a;

/// A cell's text and its style, decided from what the row holds (a
/// verdict's severity, a flag), never from the text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    /// What is printed.
    pub text: String,
    /// How it is coloured on a terminal.
    pub style: Style,
}

impl Cell {
    /// `text` in `style`.
    pub fn new(text: impl Into<String>, style: Style) -> Cell {
        Cell {
            text: text.into(),
            style,
        }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Cell {
        Cell::new(text, Style::Plain)
    }
}

impl From<&str> for Cell {
    fn from(text: &str) -> Cell {
        Cell::new(text, Style::Plain)
    }
}

/// A row of plain cells.
pub fn plain(cells: Vec<String>) -> Vec<Cell> {
    cells.into_iter().map(Cell::from).collect()
}

/// What a table prints of a cell.
pub trait TableCell {
    /// The text.
    fn text(&self) -> &str;
    /// Its own style; [`Style::Plain`] takes the column's.
    fn style(&self) -> Style;
}

impl TableCell for String {
    fn text(&self) -> &str {
        self
    }
    fn style(&self) -> Style {
        Style::Plain
    }
}

impl TableCell for Cell {
    fn text(&self) -> &str {
        &self.text
    }
    fn style(&self) -> Style {
        self.style
    }
}

/// A table column: its header and how much it matters on a narrow screen.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// The header, also the name `--columns` takes (case-insensitively).
    pub name: &'static str,
    /// 0 is never left out; larger numbers go first.
    pub priority: u8,
    /// Free text that may be shortened (with `…`) before it is left out.
    pub shrink: bool,
    /// Never left out, even with a priority above 0 (it is only shortened).
    pub kept: bool,
    /// How its cells are coloured on a terminal, unless a cell has its own
    /// style (e.g. an error column: every cell of it is an error).
    pub style: Style,
}

impl Column {
    /// A column left out only after those with a larger `priority`.
    pub const fn new(name: &'static str, priority: u8) -> Column {
        Column {
            name,
            priority,
            shrink: false,
            kept: false,
            style: Style::Plain,
        }
    }

    /// A column of free text: shortened before it is left out.
    pub const fn text(name: &'static str, priority: u8) -> Column {
        Column {
            shrink: true,
            ..Column::new(name, priority)
        }
    }

    /// This column shortened at its priority's turn but never left out
    /// (e.g. an error message: it matters, but must not push others out).
    pub const fn kept(self) -> Column {
        Column { kept: true, ..self }
    }

    /// This column with every cell in `style` (unless it has its own).
    pub const fn styled(self, style: Style) -> Column {
        Column { style, ..self }
    }
}

/// How tables are laid out: set once from the command line (see
/// [`set_layout`]); the default prints every column in full.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// The screen's width in characters; `None` is unlimited.
    pub width: Option<usize>,
    /// `--output wide`: every column, in full.
    pub wide: bool,
    /// `--columns`: these columns, in this order.
    pub columns: Vec<String>,
    /// `--no-headers`.
    pub no_headers: bool,
    /// Colour the cells of styled columns.
    pub colour: bool,
}

static LAYOUT: OnceLock<Layout> = OnceLock::new();

/// Sets the layout every later table uses (the first call wins).
pub fn set_layout(layout: Layout) {
    let _ = LAYOUT.set(layout);
}

/// The layout set by [`set_layout`], or the default.
pub fn layout() -> &'static Layout {
    static DEFAULT: Layout = Layout {
        width: None,
        wide: false,
        columns: Vec::new(),
        no_headers: false,
        colour: false,
    };
    LAYOUT.get().unwrap_or(&DEFAULT)
}

static COLUMNS_REFUSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether a table refused `--columns` (a name it does not have): the
/// command's exit status is then usage (2), whatever it was.
pub fn columns_refused() -> bool {
    COLUMNS_REFUSED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The narrowest a shortened column gets.
const MIN_SHRUNK: usize = 8;
/// The narrowest a shortened column that is never left out gets, before
/// the last resort: enough to read a verdict's reason.
const MIN_SHRUNK_KEY: usize = 30;

/// Writes the `columns`' header and the rows `rows` produces with the layout
/// of the command line, and returns how many rows there were; an empty
/// table writes nothing, not even its header.
///
/// `rows` is called twice, first for the widths and then for the text, and
/// hands each row to its argument. Rows can so be built into one reused set
/// of buffers: a table of a million producers never holds its rows.
pub fn write<C: TableCell>(
    out: &mut dyn Write,
    columns: &[Column],
    rows: &mut Rows<'_, C>,
) -> io::Result<usize> {
    write_in(out, columns, rows, layout())
}

/// [`write()`] with `layout` instead of the command line's.
pub fn write_in<C: TableCell>(
    out: &mut dyn Write,
    columns: &[Column],
    rows: &mut Rows<'_, C>,
    layout: &Layout,
) -> io::Result<usize> {
    Parts::new(columns, layout)?.write(out, rows)
}

/// One table written in parts, each part's rows handed over when they are
/// known (`kdp lag` reads a large cluster in waves, between requests): the
/// first part that has rows lays the table out ([`write()`]'s widths, fit
/// and header) and prints its rows; a later part widens a column that has
/// a wider cell, as `kubectl get` does between chunks, except that a free-text
/// column fitted to the screen keeps its width and cuts. One part is the
/// table [`write()`] prints.
#[derive(Debug)]
pub struct Parts<'c> {
    columns: &'c [Column],
    layout: &'c Layout,
    /// The columns shown, in order.
    shown: Vec<usize>,
    widths: Vec<usize>,
    /// The screen's width, unless `--output wide`.
    limit: Option<usize>,
    /// Whether the header (or its place) is written.
    started: bool,
}

impl<'c> Parts<'c> {
    /// A table of `columns` laid out by `layout`; an unknown `--columns`
    /// name is refused here, before any row is asked for.
    pub fn new(columns: &'c [Column], layout: &'c Layout) -> io::Result<Parts<'c>> {
        let shown = chosen(columns, &layout.columns).inspect_err(|_| {
            COLUMNS_REFUSED.store(true, std::sync::atomic::Ordering::Relaxed);
        })?;
        Ok(Parts {
            columns,
            layout,
            shown,
            widths: columns.iter().map(|c| c.name.chars().count()).collect(),
            limit: layout.width.filter(|_| !layout.wide),
            started: false,
        })
    }

    /// Writes the rows `rows` produces (called twice: widths, then text)
    /// and returns how many there were; a table whose parts have no row
    /// writes nothing, not even its header.
    pub fn write<C: TableCell>(
        &mut self,
        out: &mut dyn Write,
        rows: &mut Rows<'_, C>,
    ) -> io::Result<usize> {
        let (columns, layout, limit) = (self.columns, self.layout, self.limit);
        let mut natural: Vec<usize> = columns.iter().map(|c| c.name.chars().count()).collect();
        let mut count = 0;
        rows(&mut |cells| {
            count += 1;
            for (w, c) in natural.iter_mut().zip(cells) {
                *w = (*w).max(c.text().chars().count());
            }
        });
        if count == 0 {
            return Ok(0);
        }
        let first = !self.started;
        if first {
            self.widths = natural;
            if let Some(limit) = limit {
                let dropped = fit(
                    columns,
                    &mut self.widths,
                    &mut self.shown,
                    limit,
                    layout.columns.is_empty(),
                );
                note_dropped(columns, &dropped, limit);
            }
        } else {
            for (i, (w, n)) in self.widths.iter_mut().zip(natural).enumerate() {
                // a column fitted to the screen keeps its width
                if limit.is_none() || !columns[i].shrink {
                    *w = (*w).max(n);
                }
            }
        }
        self.started = true;
        let (shown, widths) = (&self.shown, &self.widths);
        let mut result = Ok(());
        let mut line = String::new();
        let mut painted = String::new();
        let mut emit = |cells: &dyn Line, is_header: bool| {
            if result.is_err() {
                return;
            }
            line.clear();
            painted.clear();
            for (n, &i) in shown.iter().enumerate() {
                let w = widths[i];
                if n > 0 {
                    line.push_str("  ");
                    painted.push_str("  ");
                }
                let (cell, own) = cells.at(i);
                let text = cut(cell, w);
                let len = text.chars().count();
                line.push_str(&text);
                let style = match own {
                    _ if !layout.colour || is_header => Style::Plain,
                    Style::Plain => columns[i].style,
                    own => own,
                };
                painted.push_str(&colour::paint(style, &text));
                let pad = w.saturating_sub(len);
                if n + 1 < shown.len() {
                    line.extend(std::iter::repeat_n(' ', pad));
                    painted.extend(std::iter::repeat_n(' ', pad));
                }
            }
            let trimmed = line.trim_end();
            // a line longer than the screen even now is cut, never wrapped
            let text = match limit {
                Some(l) if trimmed.chars().count() > l => cut(trimmed, l),
                _ if layout.colour => painted.trim_end().to_string(),
                _ => trimmed.to_string(),
            };
            result = out
                .write_all(text.as_bytes())
                .and_then(|()| out.write_all(b"\n"));
        };
        if first && !layout.no_headers {
            let header: Vec<String> = columns.iter().map(|c| c.name.to_string()).collect();
            emit(&header.as_slice(), true);
        }
        rows(&mut |cells| emit(&cells, false));
        result.map(|()| count)
    }
}

/// Says on stderr which columns were left out to fit `limit`.
fn note_dropped(columns: &[Column], dropped: &[usize], limit: usize) {
    if dropped.is_empty() {
        return;
    }
    let names: Vec<&str> = dropped.iter().map(|&i| columns[i].name).collect();
    let note = format!(
        "kdp: {} left out to fit {} (-o wide shows all): {}",
        match names.len() {
            1 => "1 column".to_string(),
            n => format!("{n} columns"),
        },
        limit,
        names.join(",")
    );
    eprintln!("{}", cut(&note, limit));
}

/// One line's cells, whatever their type.
trait Line {
    /// The text and own style of cell `i` (empty and plain past the end).
    fn at(&self, i: usize) -> (&str, Style);
}

impl<C: TableCell> Line for &[C] {
    fn at(&self, i: usize) -> (&str, Style) {
        self.get(i)
            .map_or(("", Style::Plain), |c| (c.text(), c.style()))
    }
}

/// The indices of the columns `--columns` names, in its order (all of them
/// without it); an unknown name is an error listing the table's columns.
fn chosen(columns: &[Column], names: &[String]) -> io::Result<Vec<usize>> {
    if names.is_empty() {
        return Ok((0..columns.len()).collect());
    }
    names
        .iter()
        .map(|n| {
            columns
                .iter()
                .position(|c| c.name.eq_ignore_ascii_case(n.trim()))
                .ok_or_else(|| {
                    let all: Vec<&str> = columns.iter().map(|c| c.name).collect();
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!(
                            "--columns: this table has no column {:?}; its columns: {}",
                            n.trim(),
                            all.join(",")
                        ),
                    )
                })
        })
        .collect()
}

/// Fits the shown columns into `limit`, taking the least important first:
/// a free-text column is shortened (down to [`MIN_SHRUNK`], or
/// [`MIN_SHRUNK_KEY`] for one never left out), and left out if that is not
/// enough; then what room is left goes back to the shortened columns, most
/// important first. Returns those left out (none when `may_drop` is false:
/// the user chose the columns).
fn fit(
    columns: &[Column],
    widths: &mut [usize],
    shown: &mut Vec<usize>,
    limit: usize,
    may_drop: bool,
) -> Vec<usize> {
    let total = |shown: &[usize], widths: &[usize]| {
        shown.iter().map(|&i| widths[i]).sum::<usize>() + 2 * shown.len().saturating_sub(1)
    };
    let natural = widths.to_vec();
    // least important first; among equals the rightmost first
    let mut order = shown.clone();
    order.sort_by_key(|&i| (std::cmp::Reverse(columns[i].priority), std::cmp::Reverse(i)));
    let mut dropped = Vec::new();
    for &i in &order {
        let excess = total(shown, widths).saturating_sub(limit);
        if excess == 0 {
            break;
        }
        if columns[i].shrink {
            let floor = if columns[i].priority == 0 {
                MIN_SHRUNK_KEY
            } else {
                MIN_SHRUNK
            };
            let floor = floor.min(widths[i]);
            widths[i] -= excess.min(widths[i] - floor);
        }
        let droppable = columns[i].priority > 0 && !columns[i].kept;
        if total(shown, widths) > limit && may_drop && droppable && shown.len() > 1 {
            shown.retain(|&s| s != i);
            dropped.push(i);
        }
    }
    // a last resort for the columns never left out: as narrow as a shortened one
    for &i in order
        .iter()
        .filter(|&&i| columns[i].shrink && shown.contains(&i))
    {
        let excess = total(shown, widths).saturating_sub(limit);
        let floor = MIN_SHRUNK.min(widths[i]);
        widths[i] -= excess.min(widths[i].saturating_sub(floor));
    }
    for &i in order.iter().rev().filter(|i| shown.contains(i)) {
        let spare = limit.saturating_sub(total(shown, widths));
        widths[i] += spare.min(natural[i] - widths[i]);
    }
    dropped.sort_unstable();
    dropped
}

/// `s` in at most `width` characters, the last one `…` when it was cut.
fn cut(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut t: String = s.chars().take(width - 1).collect();
    t.push('…');
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLS: [Column; 3] = [
        Column::new("A", 0),
        Column::new("Bee", 2),
        Column::text("C", 1),
    ];

    fn render(layout: &Layout, data: &[[&str; 3]]) -> String {
        let mut out = Vec::new();
        write_in(
            &mut out,
            &COLS,
            &mut |f| {
                for row in data {
                    f(&row.map(String::from));
                }
            },
            layout,
        )
        .unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn aligned_columns() {
        let data = [["xyz", "1", ""], ["é", "", "z"]];
        assert_eq!(
            render(&Layout::default(), &data),
            "A    Bee  C\nxyz  1\né         z\n"
        );
        let mut out = Vec::new();
        assert_eq!(
            write_in::<String>(&mut out, &COLS, &mut |_| {}, &Layout::default()).unwrap(),
            0
        );
        assert!(out.is_empty());
    }

    /// Each part's rows, in order.
    fn in_parts(layout: &Layout, parts: &[&[[&str; 3]]]) -> String {
        let mut out = Vec::new();
        let mut table = Parts::new(&COLS, layout).unwrap();
        for part in parts {
            let n = table
                .write(&mut out, &mut |f| {
                    for row in *part {
                        f(&row.map(String::from));
                    }
                })
                .unwrap();
            assert_eq!(n, part.len());
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_table_in_parts_is_laid_out_by_its_first_rows_and_widened_by_later_ones() {
        let first = [["xyz", "1", "a"], ["é", "", "z"]];
        let later = [["w", "123456", "b"]];
        // one part (after empty ones) is the table written at once
        let one = in_parts(&Layout::default(), &[&[], &first, &[]]);
        assert_eq!(one, render(&Layout::default(), &first));
        // a later, wider value widens its column from there on; one header
        assert_eq!(
            in_parts(&Layout::default(), &[&first, &later, &first[..1]]),
            "A    Bee  C\nxyz  1    a\né         z\nw    123456  b\nxyz  1       a\n"
        );
        // nothing in any part: nothing, not even the header
        assert_eq!(in_parts(&Layout::default(), &[&[], &[]]), "");
        // fitted to a screen: the free-text column keeps its fitted width
        // and cuts; the others still widen
        let l = Layout {
            width: Some(22),
            ..Layout::default()
        };
        let text = in_parts(
            &l,
            &[
                &[["k", "1", "a long reason"]],
                &[["kk", "22", "a much longer reason"]],
            ],
        );
        // (lines already written keep the widths they had)
        assert_eq!(
            text,
            "A  Bee  C\nk  1    a long reason\nkk  22   a much longe…\n"
        );
        // a bad --columns is refused before any row
        let bad = Layout {
            columns: vec!["nope".into()],
            ..Layout::default()
        };
        assert!(Parts::new(&COLS, &bad).is_err());
    }

    #[test]
    fn narrow_screens_shorten_then_drop_the_least_important_first() {
        let data = [["key", "bbbbbbbbbb", "a long free text reason here"]];
        let full = render(&Layout::default(), &data);
        assert_eq!(full.lines().nth(1).unwrap().chars().count(), 45);
        // 34 columns: Bee (priority 2) goes first, C keeps its text in full
        let l = Layout {
            width: Some(34),
            ..Layout::default()
        };
        assert_eq!(
            render(&l, &data),
            "A    C\nkey  a long free text reason here\n"
        );
        // narrower: C (free text) is shortened, A never left out
        let l = Layout {
            width: Some(20),
            ..Layout::default()
        };
        let text = render(&l, &data);
        assert_eq!(text, "A    C\nkey  a long free te…\n");
        for line in text.lines() {
            assert!(line.chars().count() <= 20, "{line}");
        }
        // too narrow even for the key column: cut, not wrapped
        let l = Layout {
            width: Some(2),
            ..Layout::default()
        };
        assert!(render(&l, &data)
            .lines()
            .all(|line| line.chars().count() <= 2));
        // wide ignores the width
        let l = Layout {
            width: Some(20),
            wide: true,
            ..Layout::default()
        };
        assert_eq!(render(&l, &data), full);
    }

    #[test]
    fn a_kept_column_is_shortened_but_never_left_out() {
        const KEPT: [Column; 3] = [
            Column::new("A", 0),
            Column::new("Bee", 1),
            Column::text("Err", 2).kept(),
        ];
        let l = Layout {
            width: Some(16),
            ..Layout::default()
        };
        let mut out = Vec::new();
        write_in(
            &mut out,
            &KEPT,
            &mut |f| f(&["key".to_string(), "b".into(), "a long error message".into()]),
            &l,
        )
        .unwrap();
        // Err (priority 2) is shortened first; Bee goes; Err gets the room back
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "A    Err\nkey  a long err…\n"
        );
    }

    #[test]
    fn chosen_columns_and_no_headers() {
        let data = [["1", "2", "3"]];
        let l = Layout {
            columns: vec!["c".into(), "A".into()],
            no_headers: true,
            ..Layout::default()
        };
        assert_eq!(render(&l, &data), "3  1\n");
        let l = Layout {
            columns: vec!["nope".into()],
            ..Layout::default()
        };
        let mut out = Vec::new();
        let e = write_in(&mut out, &COLS, &mut |f| f(&[String::new()]), &l).unwrap_err();
        assert!(e.to_string().contains("its columns: A,Bee,C"), "{e}");
    }

    #[test]
    fn colour_from_the_cell_or_its_column_never_counted_in_widths() {
        const STYLED: [Column; 2] = [Column::new("V", 0), Column::new("W", 0).styled(Style::Warn)];
        let l = Layout {
            colour: true,
            ..Layout::default()
        };
        let mut out = Vec::new();
        write_in(
            &mut out,
            &STYLED,
            &mut |f| {
                f(&[Cell::new("bad", Style::Bad), "x".into()]);
                f(&["ok".into(), Cell::new("y", Style::Good)]);
            },
            &l,
        )
        .unwrap();
        let text = String::from_utf8(out).unwrap();
        // a cell's own style, else its column's
        assert_eq!(
            text,
            "V    W\n\x1b[31mbad\x1b[0m  \x1b[33mx\x1b[0m\nok   \x1b[32my\x1b[0m\n"
        );
    }
}
