//! A console's text screen: the characters a terminal or a VM's text
//! display shows, written to as a terminal is (carriage return, line
//! feed, backspace, tab; escape sequences are read and ignored), and
//! drawn as pixels with 8×8 glyphs doubled in height.

/// A glyph's height on screen, pixels (8 rows, each drawn twice).
pub const GLYPH_H: usize = 16;

/// The text and cursor of a screen, and which rows changed since they
/// were last drawn.
#[derive(Debug, Clone)]
pub struct Screen {
    cols: usize,
    rows: usize,
    /// A cell's width in pixels: 8 for vncterm, 9 for a VGA text mode.
    cell_w: usize,
    cells: Vec<u8>,
    cursor: (usize, usize),
    dirty: Vec<bool>,
    escape: Escape,
}

/// Where the screen is in an escape sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    /// After `ESC`.
    Start,
    /// In `ESC [ ...` until its final byte.
    Csi,
}

impl Screen {
    /// A blank screen of `width`×`height` pixels in cells `cell_w` wide.
    pub fn new(width: usize, height: usize, cell_w: usize) -> Self {
        let cell_w = cell_w.max(8);
        let cols = (width / cell_w).max(1);
        let rows = (height / GLYPH_H).max(1);
        Self {
            cols,
            rows,
            cell_w,
            cells: vec![b' '; cols * rows],
            cursor: (0, 0),
            dirty: vec![true; rows],
            escape: Escape::None,
        }
    }

    /// Its width, pixels.
    pub fn width(&self) -> usize {
        self.cols * self.cell_w
    }

    /// Its height, pixels.
    pub fn height(&self) -> usize {
        self.rows * GLYPH_H
    }

    /// Its columns and rows.
    #[cfg(any(test, feature = "internals"))]
    pub fn size(&self) -> (usize, usize) {
        (self.cols, self.rows)
    }

    /// Writes what a program printed.
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    fn byte(&mut self, b: u8) {
        match (self.escape, b) {
            (Escape::Start, b'[') => self.escape = Escape::Csi,
            (Escape::Start, _) => self.escape = Escape::None,
            (Escape::Csi, 0x40..=0x7e) => self.escape = Escape::None,
            (Escape::Csi, _) => {}
            (Escape::None, 0x1b) => self.escape = Escape::Start,
            (Escape::None, b'\r') => self.move_to(0, self.cursor.1),
            (Escape::None, b'\n') => self.line_feed(),
            (Escape::None, 0x08) => {
                let (x, y) = self.cursor;
                self.move_to(x.saturating_sub(1), y);
            }
            (Escape::None, b'\t') => {
                let x = ((self.cursor.0 / 8) + 1) * 8;
                self.move_to(x.min(self.cols - 1), self.cursor.1);
            }
            (Escape::None, 0x20..=0x7e) => self.put(b),
            (Escape::None, _) => {}
        }
    }

    fn put(&mut self, b: u8) {
        if self.cursor.0 >= self.cols {
            self.move_to(0, self.cursor.1);
            self.line_feed();
        }
        let (x, y) = self.cursor;
        self.cells[y * self.cols + x] = b;
        self.dirty[y] = true;
        self.cursor.0 = x + 1;
    }

    fn move_to(&mut self, x: usize, y: usize) {
        self.dirty[self.cursor.1] = true;
        self.cursor = (x, y);
        self.dirty[y] = true;
    }

    fn line_feed(&mut self) {
        let (x, y) = self.cursor;
        if y + 1 < self.rows {
            self.move_to(x, y + 1);
            return;
        }
        self.cells.drain(..self.cols);
        self.cells.extend(std::iter::repeat_n(b' ', self.cols));
        self.dirty.iter_mut().for_each(|d| *d = true);
    }

    /// The text shown, row by row without trailing blanks.
    #[cfg(any(test, feature = "internals"))]
    pub fn text(&self) -> String {
        self.cells
            .chunks(self.cols)
            .map(|row| String::from_utf8_lossy(row).trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n")
            .trim_end()
            .to_string()
    }

    /// The pixel rows that changed since the last call (first, count),
    /// marked drawn.
    pub fn take_dirty(&mut self) -> Option<(usize, usize)> {
        let first = self.dirty.iter().position(|d| *d)?;
        let last = self.dirty.iter().rposition(|d| *d).unwrap_or(first);
        self.dirty.iter_mut().for_each(|d| *d = false);
        Some((first * GLYPH_H, (last - first + 1) * GLYPH_H))
    }

    /// Whether the pixel at `x`, `y` is lit (a glyph's stroke, or the
    /// cursor's underline).
    pub fn lit(&self, x: usize, y: usize) -> bool {
        let (col, row) = (x / self.cell_w, y / GLYPH_H);
        let (gx, gy) = (x % self.cell_w, y % GLYPH_H);
        if col >= self.cols || row >= self.rows {
            return false;
        }
        if (col, row) == self.cursor && gy >= GLYPH_H - 2 && gx < 8 {
            return true;
        }
        if gx >= 8 {
            return false;
        }
        let c = self.cells[row * self.cols + col];
        let glyph = font8x8::legacy::BASIC_LEGACY[usize::from(c & 0x7f)];
        glyph[gy / 2] & (1 << gx) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_goes_where_a_terminal_puts_it() {
        let mut s = Screen::new(80, 48, 8);
        assert_eq!(s.size(), (10, 3));
        s.write(b"abc\r\nde\x08X\x1b[1;32mf\x1b[0m");
        assert_eq!(s.text(), "abc\ndXf");
        // The last line scrolls the screen up.
        s.write(b"\r\n0123456789ab");
        assert_eq!(s.text(), "dXf\n0123456789\nab");
    }

    #[test]
    fn changed_rows_are_drawn_once_and_glyphs_light_pixels() {
        let mut s = Screen::new(80, 48, 8);
        assert_eq!(s.take_dirty(), Some((0, 48)));
        assert_eq!(s.take_dirty(), None);
        s.write(b"\r\n|");
        assert_eq!(s.take_dirty(), Some((0, 32)));
        // '|' is a vertical stroke in the middle of its cell, on the
        // second row; a blank lights nothing.
        assert!((16..32).any(|y| s.lit(3, y) || s.lit(4, y)));
        assert!(!(0..8).any(|x| (0..14).any(|y| s.lit(x, y))));
        // The cursor's underline after it.
        assert!(s.lit(8, 31));
    }
}
