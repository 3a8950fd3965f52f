//! The input side of the pane: bytes to characters, C0 controls, ESC and CSI sequences
//! (cursor movement, erasing, scrolling regions, the alternate screen), as tmux interprets them.

use super::*;

impl Term {
    pub(super) fn byte(&mut self, b: u8) {
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

    pub(super) fn ground(&mut self, b: u8) {
        if self.utf8_need > 0 {
            if b & 0xc0 == 0x80 {
                self.utf8_buf[self.utf8_len] = b;
                self.utf8_len += 1;
                if self.utf8_len == self.utf8_need {
                    self.utf8_need = 0;
                    // Invalid sequences (overlong, surrogates) are dropped, as tmux does.
                    if let Some(c) =
                        std::str::from_utf8(&self.utf8_buf[..self.utf8_len]).ok().and_then(|s| s.chars().next())
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

    pub(super) fn esc(&mut self, b: u8) {
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

    pub(super) fn csi(&mut self, b: u8) {
        match b {
            b'0'..=b'9' => {
                let d = (b - b'0') as u32;
                self.cur_param = Some(self.cur_param.unwrap_or(0).saturating_mul(10).saturating_add(d).min(1_000_000));
            }
            b';' | b':' => {
                self.params.push(self.cur_param.take().unwrap_or(0));
            }
            b'<'..=b'?' if self.params.is_empty() && self.cur_param.is_none() => self.private = Some(b),
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

    pub(super) fn param(&self, i: usize, default: usize) -> usize {
        match self.params.get(i) {
            Some(&0) | None => default,
            Some(&v) => v as usize,
        }
    }

    pub(super) fn csi_dispatch(&mut self, f: u8) {
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
            b'A' => self.cy = self.cy.saturating_sub(n).max(if self.cy >= self.top { self.top } else { 0 }),
            b'B' | b'e' => self.cy = (self.cy + n).min(if self.cy <= self.bottom { self.bottom } else { ROWS - 1 }),
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
            b'L' if self.cy >= self.top && self.cy <= self.bottom => {
                for _ in 0..n.min(self.bottom - self.cy + 1) {
                    self.screen.remove(self.bottom);
                    self.screen.insert(self.cy, Row::default());
                }
            }
            b'M' if self.cy >= self.top && self.cy <= self.bottom => {
                for _ in 0..n.min(self.bottom - self.cy + 1) {
                    self.screen.remove(self.cy);
                    self.screen.insert(self.bottom, Row::default());
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
}
