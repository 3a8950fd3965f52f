//! A small terminal emulator that keeps exactly what a tmux 3.3 pane of 1000×1000 cells with a
//! `history-limit` of 10 000 keeps, and renders it the way `capture-pane -J -pS -` followed by
//! libtmux's line handling and the reference's per-line `rstrip` renders it.
//!
//! Only the text matters: attributes (SGR) are dropped on input, so a cell is one `char`.
//! Rows that scrolled into the history can no longer change, so they are frozen into compact
//! strings; the live screen keeps `Vec<char>` rows for random access. Memory is therefore bounded
//! by `HISTORY_LIMIT` + `ROWS` rows whatever a command prints.

mod escapes;
mod width;

use std::collections::VecDeque;

pub use width::char_width;

/// Pane width (tmux window `x=1000`).
pub const COLS: usize = 1000;
/// Pane height (tmux window `y=1000`).
pub const ROWS: usize = 1000;
/// tmux `history-limit`.
pub const HISTORY_LIMIT: usize = 10_000;

/// The right half of a double-width character.
const PAD: char = '\0';

/// The marker the PS1 prompt ends with; seeing it in the byte stream triggers a completion check.
const MARKER: &[u8] = b"###PS1END###";

#[derive(Default, Clone)]
struct Row {
    /// Written cells; unwritten cells inside the row are spaces, the row ends at the last used cell.
    cells: Vec<char>,
    /// Combining characters attached to a cell (rare).
    combining: Vec<(u16, char)>,
    /// The text continues on the next row (autowrap).
    wrapped: bool,
}

impl Row {
    fn clear(&mut self) {
        self.cells.clear();
        self.combining.clear();
        self.wrapped = false;
    }

    fn text(&self) -> String {
        let mut s = String::with_capacity(self.cells.len());
        self.push_text(&mut s);
        s
    }

    fn push_text(&self, s: &mut String) {
        for (i, &c) in self.cells.iter().enumerate() {
            if c != PAD {
                s.push(c);
            }
            if !self.combining.is_empty() {
                for &(col, m) in &self.combining {
                    if col as usize == i {
                        s.push(m);
                    }
                }
            }
        }
    }

    fn ensure(&mut self, len: usize) {
        if self.cells.len() < len {
            self.cells.resize(len, ' ');
        }
    }

    /// Before overwriting `[from, to)`: blank the halves of wide characters cut by the range.
    fn split_wide(&mut self, from: usize, to: usize) {
        if from < self.cells.len() && self.cells[from] == PAD && from > 0 {
            self.cells[from - 1] = ' ';
        }
        if to < self.cells.len() && self.cells[to] == PAD {
            self.cells[to] = ' ';
        }
        if !self.combining.is_empty() {
            self.combining.retain(|&(c, _)| (c as usize) < from || (c as usize) >= to);
        }
    }

    fn truncate(&mut self, len: usize) {
        if len < self.cells.len() {
            if len > 0 && self.cells[len] == PAD {
                self.cells[len - 1] = ' ';
            }
            self.cells.truncate(len);
            self.combining.retain(|&(c, _)| (c as usize) < len);
        }
    }

    fn erase(&mut self, from: usize, to: usize) {
        let to = to.min(self.cells.len());
        if from >= to {
            return;
        }
        self.split_wide(from, to);
        if to >= self.cells.len() {
            self.truncate(from);
        } else {
            for c in &mut self.cells[from..to] {
                *c = ' ';
            }
        }
    }
}

struct HistRow {
    text: Box<str>,
    wrapped: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Ground,
    Esc,
    /// ESC followed by an intermediate byte (charset designation and the like): one more byte.
    EscInter,
    Csi,
    /// OSC, DCS, APC, PM, SOS and tmux's `ESC k` title: skipped until ST or BEL.
    Str,
    StrEsc,
}

struct Saved {
    screen: VecDeque<Row>,
    cx: usize,
    cy: usize,
}

/// The pane.
pub struct Term {
    history: VecDeque<HistRow>,
    screen: VecDeque<Row>,
    cx: usize,
    cy: usize,
    saved_cursor: (usize, usize),
    top: usize,
    bottom: usize,
    autowrap: bool,
    /// DECCKM: cursor keys send `ESC O x` instead of `ESC [ x`.
    pub app_cursor: bool,
    /// The main screen while the alternate screen is active (no history is collected there).
    alt: Option<Saved>,
    state: State,
    params: Vec<u32>,
    cur_param: Option<u32>,
    private: Option<u8>,
    csi_inter: bool,
    utf8_buf: [u8; 4],
    utf8_len: usize,
    utf8_need: usize,
    marker_pos: usize,
    /// How many times the prompt end marker has appeared in the output so far.
    pub markers_seen: u64,
    /// Bytes fed so far.
    pub bytes_seen: u64,
    /// Bytes seen since the last marker (saturating) and whether a newline came right after it.
    after_marker: u8,
    newline_after_marker: bool,
    /// Swallow the newline that ends a prompt which was already redrawn by `reset_grid`.
    swallow_newline: bool,
}

impl Default for Term {
    fn default() -> Self {
        Self::new()
    }
}

impl Term {
    pub fn new() -> Self {
        let mut screen = VecDeque::with_capacity(ROWS);
        screen.resize_with(ROWS, Row::default);
        Term {
            history: VecDeque::new(),
            screen,
            cx: 0,
            cy: 0,
            saved_cursor: (0, 0),
            top: 0,
            bottom: ROWS - 1,
            autowrap: true,
            app_cursor: false,
            alt: None,
            state: State::Ground,
            params: Vec::new(),
            cur_param: None,
            private: None,
            csi_inter: false,
            utf8_buf: [0; 4],
            utf8_len: 0,
            utf8_need: 0,
            marker_pos: 0,
            markers_seen: 0,
            bytes_seen: 0,
            after_marker: 0,
            newline_after_marker: false,
            swallow_newline: false,
        }
    }

    /// Empty the screen and the history (tmux `C-l` + `clear-history`); keeps the parser state.
    pub fn reset_grid(&mut self) {
        self.history.clear();
        for r in self.screen.iter_mut() {
            r.clear();
        }
        self.cx = 0;
        self.cy = 0;
        self.top = 0;
        self.bottom = ROWS - 1;
        self.alt = None;
    }

    /// True when the last prompt marker was printed but the newline ending the prompt was not
    /// (yet): after redrawing the prompt, that newline must not move the cursor again.
    pub fn prompt_newline_pending(&self) -> bool {
        !self.newline_after_marker && self.after_marker == 0
    }

    /// Drop the next newline (see [`Term::prompt_newline_pending`]).
    pub fn swallow_next_newline(&mut self) {
        self.swallow_newline = true;
    }

    /// Number of rows in the history (for tests).
    pub fn history_len(&self) -> usize {
        self.history.len()
    }

    /// Feed raw PTY output.
    pub fn feed(&mut self, data: &[u8]) {
        let mut data = data;
        if self.swallow_newline {
            let mut k = 0;
            while k < data.len() {
                match data[k] {
                    b'\r' => k += 1,
                    b'\n' => {
                        k += 1;
                        self.swallow_newline = false;
                        break;
                    }
                    _ => {
                        self.swallow_newline = false;
                        break;
                    }
                }
            }
            data = &data[k..];
        }
        self.bytes_seen += data.len() as u64;
        self.scan_marker(data);
        let mut i = 0;
        while i < data.len() {
            let b = data[i];
            if self.state == State::Ground && self.utf8_need == 0 && (0x20..0x7f).contains(&b) {
                // Fast path: a run of printable ASCII.
                let start = i;
                while i < data.len() && (0x20..0x7f).contains(&data[i]) {
                    i += 1;
                }
                self.put_ascii(&data[start..i]);
                continue;
            }
            self.byte(b);
            i += 1;
        }
    }

    fn scan_marker(&mut self, data: &[u8]) {
        // KMP over "###PS1END###" (failure table below), carried across chunks.
        const FAIL: [usize; 12] = [0, 1, 2, 0, 0, 0, 0, 0, 0, 1, 2, 3];
        let mut pos = self.marker_pos;
        for &b in data {
            if self.after_marker == 0 && b != b'\r' {
                self.newline_after_marker = b == b'\n';
                self.after_marker = 1;
            }
            while pos > 0 && b != MARKER[pos] {
                pos = FAIL[pos - 1];
            }
            if b == MARKER[pos] {
                pos += 1;
                if pos == MARKER.len() {
                    self.markers_seen += 1;
                    self.after_marker = 0;
                    self.newline_after_marker = false;
                    pos = FAIL[pos - 1];
                }
            }
        }
        self.marker_pos = pos;
    }

    fn alternate_on(&mut self) {
        if self.alt.is_some() {
            return;
        }
        let mut blank = VecDeque::with_capacity(ROWS);
        blank.resize_with(ROWS, Row::default);
        let main = std::mem::replace(&mut self.screen, blank);
        self.alt = Some(Saved { screen: main, cx: self.cx, cy: self.cy });
    }

    fn alternate_off(&mut self) {
        if let Some(saved) = self.alt.take() {
            self.screen = saved.screen;
            self.cx = saved.cx;
            self.cy = saved.cy;
        }
    }

    /// tmux `scroll-on-clear`: the used part of the screen goes to the history, then it is cleared.
    fn clear_screen_to_history(&mut self) {
        let used = self.screen.iter().rposition(|r| !r.cells.is_empty()).map(|i| i + 1).unwrap_or(0);
        for _ in 0..used {
            let row = self.screen.pop_front().expect("screen row");
            self.push_history(row);
            self.screen.push_back(Row::default());
        }
        for r in self.screen.iter_mut() {
            r.clear();
        }
    }

    fn push_history(&mut self, row: Row) {
        if self.alt.is_some() {
            return;
        }
        // grid_collect_history: at the limit, free a tenth of it at once.
        if !self.history.is_empty() && self.history.len() >= HISTORY_LIMIT {
            let gap = (HISTORY_LIMIT / 10).max(1);
            self.history.drain(..gap.min(self.history.len()));
        }
        let wrapped = row.wrapped;
        let mut text = row.text();
        if !wrapped {
            // Trailing spaces of an unwrapped row never survive the final per-line rstrip.
            let t = text.trim_end_matches(' ').len();
            text.truncate(t);
        }
        self.history.push_back(HistRow { text: text.into_boxed_str(), wrapped });
    }

    fn scroll_up(&mut self) {
        if self.top == 0 && self.bottom == ROWS - 1 {
            let row = self.screen.pop_front().expect("screen row");
            self.push_history(row);
            self.screen.push_back(Row::default());
        } else {
            self.screen.remove(self.top);
            self.screen.insert(self.bottom, Row::default());
        }
    }

    fn scroll_down(&mut self) {
        self.screen.remove(self.bottom);
        self.screen.insert(self.top, Row::default());
    }

    fn linefeed(&mut self) {
        if self.cy == self.bottom {
            self.scroll_up();
        } else if self.cy < ROWS - 1 {
            self.cy += 1;
        }
    }

    fn reverse_index(&mut self) {
        if self.cy == self.top {
            self.scroll_down();
        } else if self.cy > 0 {
            self.cy -= 1;
        }
    }

    fn backspace(&mut self) {
        if self.cx == 0 {
            if self.cy > 0 && self.screen[self.cy - 1].wrapped {
                self.cy -= 1;
                self.cx = COLS - 1;
            }
        } else {
            self.cx = self.cx.min(COLS) - 1;
        }
    }

    fn tab(&mut self) {
        if self.cx >= COLS - 1 {
            return;
        }
        self.cx = ((self.cx / 8) + 1) * 8;
        if self.cx > COLS - 1 {
            self.cx = COLS - 1;
        }
    }

    fn wrap_if_needed(&mut self, width: usize) {
        if self.cx + width > COLS {
            if self.autowrap {
                self.screen[self.cy].wrapped = true;
                self.linefeed();
                self.cx = 0;
            } else {
                self.cx = COLS - width;
            }
        }
    }

    fn put_ascii(&mut self, run: &[u8]) {
        let mut run = run;
        while !run.is_empty() {
            self.wrap_if_needed(1);
            let n = run.len().min(COLS - self.cx);
            let cx = self.cx;
            let row = &mut self.screen[self.cy];
            row.split_wide(cx, cx + n);
            if row.cells.len() <= cx {
                row.cells.resize(cx, ' ');
                row.cells.extend(run[..n].iter().map(|&b| b as char));
            } else {
                row.ensure(cx + n);
                for (c, &b) in row.cells[cx..cx + n].iter_mut().zip(&run[..n]) {
                    *c = b as char;
                }
            }
            self.cx += n;
            run = &run[n..];
        }
    }

    fn put_char(&mut self, c: char) {
        let w = char_width(c);
        if w == 0 {
            if self.cx > 0 {
                let col = (self.cx - 1).min(COLS - 1);
                let row = &mut self.screen[self.cy];
                let mut col = col;
                if col < row.cells.len() && row.cells[col] == PAD && col > 0 {
                    col -= 1;
                }
                if col < row.cells.len() {
                    row.combining.push((col as u16, c));
                }
            }
            return;
        }
        self.wrap_if_needed(w);
        let cx = self.cx;
        let row = &mut self.screen[self.cy];
        row.split_wide(cx, cx + w);
        row.ensure(cx + w);
        row.cells[cx] = c;
        if w == 2 {
            row.cells[cx + 1] = PAD;
        }
        self.cx += w;
    }

    /// The pane text as the reference sees it: history and screen, wrapped rows joined, trailing
    /// empty lines dropped, each line right-stripped, joined with `\n`.
    pub fn capture(&self) -> String {
        // Streamed into one string (no per-line allocations): a full pane of 1000-column rows
        // is ~11 MB and is captured only when a reply is built.
        let est: usize = self.history.iter().map(|h| h.text.len() + 1).sum::<usize>()
            + self.screen.iter().map(|r| r.cells.len() + 1).sum::<usize>();
        let mut out = String::with_capacity(est);
        let mut line_start = 0usize;
        let mut open = false;
        let mut raw_nonempty = false;
        let mut keep_to = 0usize;
        let mut first = true;
        let finish = |out: &mut String, line_start: usize, raw_nonempty: bool, keep_to: &mut usize| {
            let trimmed = oh_pysem::rstrip(&out[line_start..]).len();
            out.truncate(line_start + trimmed);
            if raw_nonempty {
                *keep_to = out.len();
            }
        };
        let rows = self
            .history
            .iter()
            .map(|h| (Some(&*h.text), None, h.wrapped))
            .chain(self.screen.iter().map(|r| (None, Some(r), r.wrapped)));
        for (hist, row, wrapped) in rows {
            if !open {
                if !first {
                    out.push('\n');
                }
                first = false;
                line_start = out.len();
                raw_nonempty = false;
                open = true;
            }
            match (hist, row) {
                (Some(text), _) => {
                    raw_nonempty |= !text.is_empty();
                    out.push_str(text);
                }
                (None, Some(r)) => {
                    raw_nonempty |= !r.cells.is_empty();
                    r.push_text(&mut out);
                }
                _ => {}
            }
            if !wrapped {
                finish(&mut out, line_start, raw_nonempty, &mut keep_to);
                open = false;
            }
        }
        if open {
            finish(&mut out, line_start, raw_nonempty, &mut keep_to);
        }
        out.truncate(keep_to);
        out
    }
}
