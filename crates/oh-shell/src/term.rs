//! A small terminal emulator that keeps exactly what a tmux 3.3 pane of 1000×1000 cells with a
//! `history-limit` of 10 000 keeps, and renders it the way `capture-pane -J -pS -` followed by
//! libtmux's line handling and the reference's per-line `rstrip` renders it.
//!
//! Only the text matters: attributes (SGR) are dropped on input, so a cell is one `char`.
//! Rows that scrolled into the history can no longer change, so they are frozen into compact
//! strings; the live screen keeps `Vec<char>` rows for random access. Memory is therefore bounded
//! by `HISTORY_LIMIT` + `ROWS` rows whatever a command prints.

use std::collections::VecDeque;

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
            self.combining
                .retain(|&(c, _)| (c as usize) < from || (c as usize) >= to);
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

    fn byte(&mut self, b: u8) {
        match self.state {
            State::Ground => self.ground(b),
            State::Esc => self.esc(b),
            State::EscInter => self.state = State::Ground,
            State::Csi => self.csi(b),
            State::Str => {
                if b == 0x07 {
                    self.state = State::Ground;
                } else if b == 0x1b {
                    self.state = State::StrEsc;
                }
            }
            State::StrEsc => {
                self.state = if b == b'\\' {
                    State::Ground
                } else if b == 0x1b {
                    State::StrEsc
                } else {
                    State::Str
                };
            }
        }
    }

    fn ground(&mut self, b: u8) {
        if self.utf8_need > 0 {
            if b & 0xc0 == 0x80 {
                self.utf8_buf[self.utf8_len] = b;
                self.utf8_len += 1;
                if self.utf8_len == self.utf8_need {
                    self.utf8_need = 0;
                    // Invalid sequences (overlong, surrogates) are dropped, as tmux does.
                    if let Some(c) = std::str::from_utf8(&self.utf8_buf[..self.utf8_len])
                        .ok()
                        .and_then(|s| s.chars().next())
                    {
                        self.put_char(c);
                    }
                }
                return;
            }
            // Broken sequence: dropped; the byte is processed afresh.
            self.utf8_need = 0;
        }
        match b {
            0x1b => {
                self.state = State::Esc;
            }
            0x08 => self.backspace(),
            0x09 => self.tab(),
            0x0a..=0x0c => self.linefeed(),
            0x0d => self.cx = 0,
            0x00..=0x1f | 0x7f => {}
            0x20..=0x7e => self.put_char(b as char),
            0xc2..=0xf4 => {
                self.utf8_buf[0] = b;
                self.utf8_len = 1;
                self.utf8_need = if b >= 0xf0 {
                    4
                } else if b >= 0xe0 {
                    3
                } else {
                    2
                };
            }
            _ => {}
        }
    }

    fn esc(&mut self, b: u8) {
        self.state = State::Ground;
        match b {
            b'[' => {
                self.state = State::Csi;
                self.params.clear();
                self.cur_param = None;
                self.private = None;
                self.csi_inter = false;
            }
            b']' | b'P' | b'_' | b'^' | b'X' | b'k' => self.state = State::Str,
            b' '..=b'/' => self.state = State::EscInter,
            b'7' => self.saved_cursor = (self.cx, self.cy),
            b'8' => {
                self.cx = self.saved_cursor.0.min(COLS - 1);
                self.cy = self.saved_cursor.1.min(ROWS - 1);
            }
            b'D' => self.linefeed(),
            b'E' => {
                self.cx = 0;
                self.linefeed();
            }
            b'M' => self.reverse_index(),
            b'c' => {
                self.clear_screen_to_history();
                self.cx = 0;
                self.cy = 0;
                self.top = 0;
                self.bottom = ROWS - 1;
            }
            _ => {}
        }
    }

    fn csi(&mut self, b: u8) {
        match b {
            b'0'..=b'9' => {
                let d = (b - b'0') as u32;
                self.cur_param = Some(
                    self.cur_param
                        .unwrap_or(0)
                        .saturating_mul(10)
                        .saturating_add(d)
                        .min(1_000_000),
                );
            }
            b';' | b':' => {
                self.params.push(self.cur_param.take().unwrap_or(0));
            }
            b'<'..=b'?' => {
                if self.params.is_empty() && self.cur_param.is_none() {
                    self.private = Some(b);
                }
            }
            b' '..=b'/' => self.csi_inter = true,
            0x40..=0x7e => {
                if let Some(p) = self.cur_param.take() {
                    self.params.push(p);
                }
                self.state = State::Ground;
                if !self.csi_inter {
                    self.csi_dispatch(b);
                }
            }
            0x18 | 0x1a => self.state = State::Ground,
            0x1b => self.state = State::Esc,
            _ => {}
        }
    }

    fn param(&self, i: usize, default: usize) -> usize {
        match self.params.get(i) {
            Some(&0) | None => default,
            Some(&v) => v as usize,
        }
    }

    fn csi_dispatch(&mut self, f: u8) {
        if let Some(p) = self.private {
            if p == b'?' && (f == b'h' || f == b'l') {
                let on = f == b'h';
                for i in 0..self.params.len() {
                    match self.params[i] {
                        1 => self.app_cursor = on,
                        7 => self.autowrap = on,
                        47 | 1047 | 1049 => {
                            if on {
                                self.alternate_on();
                            } else {
                                self.alternate_off();
                            }
                        }
                        _ => {}
                    }
                }
            }
            return;
        }
        let n = self.param(0, 1);
        match f {
            b'A' => {
                self.cy =
                    self.cy
                        .saturating_sub(n)
                        .max(if self.cy >= self.top { self.top } else { 0 })
            }
            b'B' | b'e' => {
                self.cy = (self.cy + n).min(if self.cy <= self.bottom {
                    self.bottom
                } else {
                    ROWS - 1
                })
            }
            b'C' | b'a' => self.cx = (self.cx + n).min(COLS - 1),
            b'D' => self.cx = self.cx.min(COLS - 1).saturating_sub(n),
            b'E' => {
                self.cy = (self.cy + n).min(ROWS - 1);
                self.cx = 0;
            }
            b'F' => {
                self.cy = self.cy.saturating_sub(n);
                self.cx = 0;
            }
            b'G' | b'`' => self.cx = (n - 1).min(COLS - 1),
            b'd' => self.cy = (n - 1).min(ROWS - 1),
            b'H' | b'f' => {
                self.cy = (self.param(0, 1) - 1).min(ROWS - 1);
                self.cx = (self.param(1, 1) - 1).min(COLS - 1);
            }
            b'K' => {
                let cx = self.cx.min(COLS);
                let row = &mut self.screen[self.cy];
                match self.params.first().copied().unwrap_or(0) {
                    0 => row.erase(cx, COLS),
                    1 => row.erase(0, (cx + 1).min(COLS)),
                    2 => row.erase(0, COLS),
                    _ => {}
                }
            }
            b'J' => match self.params.first().copied().unwrap_or(0) {
                0 => {
                    if self.cx == 0 && self.cy == 0 && self.alt.is_none() {
                        self.clear_screen_to_history();
                    } else {
                        let cx = self.cx.min(COLS);
                        self.screen[self.cy].erase(cx, COLS);
                        for y in self.cy + 1..ROWS {
                            self.screen[y].clear();
                        }
                    }
                }
                1 => {
                    for y in 0..self.cy {
                        self.screen[y].clear();
                    }
                    let cx = self.cx.min(COLS - 1);
                    self.screen[self.cy].erase(0, cx + 1);
                }
                2 => {
                    if self.alt.is_none() {
                        self.clear_screen_to_history();
                    } else {
                        for r in self.screen.iter_mut() {
                            r.clear();
                        }
                    }
                }
                3 => self.history.clear(),
                _ => {}
            },
            b'@' => {
                let cx = self.cx.min(COLS - 1);
                let row = &mut self.screen[self.cy];
                if cx < row.cells.len() {
                    row.split_wide(cx, cx);
                    for _ in 0..n.min(COLS) {
                        row.cells.insert(cx, ' ');
                    }
                    row.truncate(COLS);
                    row.combining.clear();
                }
            }
            b'P' => {
                let cx = self.cx.min(COLS - 1);
                let row = &mut self.screen[self.cy];
                if cx < row.cells.len() {
                    let end = (cx + n).min(row.cells.len());
                    row.split_wide(cx, end);
                    row.cells.drain(cx..end);
                    row.combining.clear();
                }
            }
            b'X' => {
                let cx = self.cx.min(COLS - 1);
                self.screen[self.cy].erase(cx, cx + n);
            }
            b'L' => {
                if self.cy >= self.top && self.cy <= self.bottom {
                    for _ in 0..n.min(self.bottom - self.cy + 1) {
                        self.screen.remove(self.bottom);
                        self.screen.insert(self.cy, Row::default());
                    }
                }
            }
            b'M' => {
                if self.cy >= self.top && self.cy <= self.bottom {
                    for _ in 0..n.min(self.bottom - self.cy + 1) {
                        self.screen.remove(self.cy);
                        self.screen.insert(self.bottom, Row::default());
                    }
                }
            }
            b'S' => {
                for _ in 0..n.min(ROWS) {
                    self.scroll_up();
                }
            }
            b'T' => {
                for _ in 0..n.min(ROWS) {
                    self.scroll_down();
                }
            }
            b'r' => {
                let top = self.param(0, 1) - 1;
                let bottom = self.param(1, ROWS) - 1;
                if top < bottom && bottom < ROWS {
                    self.top = top;
                    self.bottom = bottom;
                    self.cx = 0;
                    self.cy = 0;
                }
            }
            b's' => self.saved_cursor = (self.cx, self.cy),
            b'u' => {
                self.cx = self.saved_cursor.0.min(COLS - 1);
                self.cy = self.saved_cursor.1.min(ROWS - 1);
            }
            _ => {}
        }
    }

    fn alternate_on(&mut self) {
        if self.alt.is_some() {
            return;
        }
        let mut blank = VecDeque::with_capacity(ROWS);
        blank.resize_with(ROWS, Row::default);
        let main = std::mem::replace(&mut self.screen, blank);
        self.alt = Some(Saved {
            screen: main,
            cx: self.cx,
            cy: self.cy,
        });
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
        let used = self
            .screen
            .iter()
            .rposition(|r| !r.cells.is_empty())
            .map(|i| i + 1)
            .unwrap_or(0);
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
        self.history.push_back(HistRow {
            text: text.into_boxed_str(),
            wrapped,
        });
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
        let finish =
            |out: &mut String, line_start: usize, raw_nonempty: bool, keep_to: &mut usize| {
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

/// Display width of a character in a UTF-8 locale (an approximation of glibc's `wcwidth`).
pub fn char_width(c: char) -> usize {
    let u = c as u32;
    if u < 0x300 {
        return 1;
    }
    if is_zero_width(u) {
        return 0;
    }
    if is_wide(u) {
        2
    } else {
        1
    }
}

fn is_zero_width(u: u32) -> bool {
    matches!(u,
        0x0300..=0x036F | 0x0483..=0x0489 | 0x0591..=0x05BD | 0x05BF | 0x05C1..=0x05C2 | 0x05C4..=0x05C5
        | 0x05C7 | 0x0610..=0x061A | 0x064B..=0x065F | 0x0670 | 0x06D6..=0x06DC | 0x06DF..=0x06E4
        | 0x06E7..=0x06E8 | 0x06EA..=0x06ED | 0x0900..=0x0902 | 0x093A | 0x093C | 0x0941..=0x0948 | 0x094D
        | 0x0E31 | 0x0E34..=0x0E3A | 0x0E47..=0x0E4E | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x20D0..=0x20FF | 0xFE00..=0xFE0F
        | 0xFE20..=0xFE2F | 0xFEFF | 0x1160..=0x11FF | 0xE0100..=0xE01EF)
}

fn is_wide(u: u32) -> bool {
    matches!(u,
        0x1100..=0x115F | 0x231A..=0x231B | 0x2329..=0x232A | 0x23E9..=0x23EC | 0x23F0 | 0x23F3
        | 0x25FD..=0x25FE | 0x2614..=0x2615 | 0x2648..=0x2653 | 0x267F | 0x2693 | 0x26A1 | 0x26AA..=0x26AB
        | 0x26BD..=0x26BE | 0x26C4..=0x26C5 | 0x26CE | 0x26D4 | 0x26EA | 0x26F2..=0x26F3 | 0x26F5 | 0x26FA
        | 0x26FD | 0x2705 | 0x270A..=0x270B | 0x2728 | 0x274C | 0x274E | 0x2753..=0x2755 | 0x2757
        | 0x2795..=0x2797 | 0x27B0 | 0x27BF | 0x2B1B..=0x2B1C | 0x2B50 | 0x2B55
        | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xA000..=0xA4CF
        | 0xA960..=0xA97F | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF | 0xFE10..=0xFE19 | 0xFE30..=0xFE6F
        | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6 | 0x16FE0..=0x16FE4 | 0x17000..=0x18CFF | 0x1B000..=0x1B2FF
        | 0x1F004 | 0x1F0CF | 0x1F18E | 0x1F191..=0x1F19A | 0x1F200..=0x1F251 | 0x1F300..=0x1F320
        | 0x1F32D..=0x1F335 | 0x1F337..=0x1F37C | 0x1F37E..=0x1F393 | 0x1F3A0..=0x1F3CA | 0x1F3CF..=0x1F3D3
        | 0x1F3E0..=0x1F3F0 | 0x1F3F4 | 0x1F3F8..=0x1F43E | 0x1F440 | 0x1F442..=0x1F4FC | 0x1F4FF..=0x1F53D
        | 0x1F54B..=0x1F54E | 0x1F550..=0x1F567 | 0x1F57A | 0x1F595..=0x1F596 | 0x1F5A4 | 0x1F5FB..=0x1F64F
        | 0x1F680..=0x1F6C5 | 0x1F6CC | 0x1F6D0..=0x1F6D2 | 0x1F6D5..=0x1F6D7 | 0x1F6EB..=0x1F6EC
        | 0x1F6F4..=0x1F6FC | 0x1F7E0..=0x1F7EB | 0x1F90C..=0x1F93A | 0x1F93C..=0x1F945 | 0x1F947..=0x1F9FF
        | 0x1FA70..=0x1FAFF | 0x20000..=0x2FFFD | 0x30000..=0x3FFFD)
}
