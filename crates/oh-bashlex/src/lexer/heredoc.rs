//! Here-documents: after a newline, the bodies of the pending `<<` redirects are read up to
//! their delimiter lines (`gatherheredocuments`, strict mode: a missing delimiter is an error).

use super::*;
use crate::{Err, ErrKind, R};

impl Tokenizer {
    fn readline(&mut self) -> R<Option<String>> {
        let mut buf = String::new();
        let mut n = 0;
        loop {
            let c = match self.getc(true)? {
                None => {
                    if n == 0 {
                        return Ok(None);
                    }
                    '\n'
                }
                Some(c) => c,
            };
            buf.push(c);
            n += 1;
            if c == '\n' {
                return Ok(Some(buf));
            }
        }
    }

    /// `gatherheredocuments` (strict mode).
    pub fn gather_heredocs(&mut self) -> R<()> {
        while !self.redirstack.is_empty() {
            let (node, kill) = self.redirstack.remove(0);
            let word = self.heredoc_words.iter().find(|(n, _)| *n == node).map(|(_, w)| w.clone()).unwrap_or_default();
            let wl = word.chars().count();
            let start = self.idx;
            let mut line = self.readline()?;
            let mut done = false;
            while let Some(mut l) = line.take() {
                if kill {
                    while l.starts_with('\t') {
                        l.remove(0);
                    }
                }
                let lc: Vec<char> = l.chars().collect();
                if lc.len() == wl + 1 && lc[..wl].iter().collect::<String>() == word && lc[wl] == '\n' {
                    done = true;
                    break;
                }
                line = self.readline()?;
            }
            if !done {
                return Err(Err::new(ErrKind::Parsing));
            }
            let end = self.idx - 1;
            self.heredocs_done.push((node, start, end));
        }
        Ok(())
    }
}
