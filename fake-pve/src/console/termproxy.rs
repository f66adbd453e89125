//! The protocol `termproxy` speaks with xterm.js over its websocket
//! (proxmox-termproxy): first the line `USER:TICKET\n`, answered `OK`
//! once the ticket is valid; then messages `0:LEN:DATA` (input, LEN
//! bytes), `1:COLS:ROWS:` (a resize) and `2` (a ping). What the
//! terminal prints goes back as it is.

/// The longest authentication line read.
const MAX_AUTH: usize = 4096;

/// A client's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    /// The first line: who and with which ticket.
    Auth {
        /// The user (or token) name.
        user: String,
        /// The ticket.
        ticket: String,
    },
    /// Keystrokes.
    Input(Vec<u8>),
    /// The terminal's new size.
    Resize {
        /// Columns.
        cols: u16,
        /// Rows.
        rows: u16,
    },
    /// A keep-alive.
    Ping,
}

/// The client's messages, read from its bytes as they come.
#[derive(Debug, Default)]
pub struct Reader {
    buf: Vec<u8>,
    authed: bool,
}

impl Reader {
    /// Reads the client's bytes: the messages now whole.
    ///
    /// # Errors
    /// A malformed message (the connection is closed).
    pub fn input(&mut self, bytes: &[u8]) -> Result<Vec<Msg>, String> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        loop {
            let (msg, used) = if self.authed {
                match message(&self.buf)? {
                    Some(x) => x,
                    None => break,
                }
            } else {
                let Some(nl) = self.buf.iter().position(|b| *b == b'\n') else {
                    if self.buf.len() > MAX_AUTH {
                        return Err("authentication line too long".into());
                    }
                    break;
                };
                let line = String::from_utf8_lossy(&self.buf[..nl]).to_string();
                let (user, ticket) = line
                    .split_once(':')
                    .ok_or_else(|| "malformed authentication line".to_string())?;
                self.authed = true;
                (
                    Msg::Auth {
                        user: user.to_string(),
                        ticket: ticket.to_string(),
                    },
                    nl + 1,
                )
            };
            self.buf.drain(..used);
            out.push(msg);
        }
        Ok(out)
    }
}

/// One message after the authentication, and the bytes it took.
fn message(b: &[u8]) -> Result<Option<(Msg, usize)>, String> {
    let Some(&kind) = b.first() else {
        return Ok(None);
    };
    let field = |from: usize| -> Result<Option<(u64, usize)>, String> {
        if from > b.len() {
            return Ok(None);
        }
        let Some(end) = b[from..].iter().position(|c| *c == b':') else {
            if b.len() - from > 20 {
                return Err("malformed message".into());
            }
            return Ok(None);
        };
        let text = std::str::from_utf8(&b[from..from + end]).map_err(|e| e.to_string())?;
        let n = text
            .parse()
            .map_err(|_| format!("invalid number '{text}'"))?;
        Ok(Some((n, from + end + 1)))
    };
    match kind {
        b'0' => {
            if b.len() < 2 {
                return Ok(None);
            }
            let Some((len, at)) = field(2)? else {
                return Ok(None);
            };
            let len = usize::try_from(len).map_err(|e| e.to_string())?;
            if len > super::ws::MAX_PAYLOAD {
                return Err("message too large".into());
            }
            if b.len() < at + len {
                return Ok(None);
            }
            Ok(Some((Msg::Input(b[at..at + len].to_vec()), at + len)))
        }
        b'1' => {
            let Some((cols, at)) = field(2)? else {
                return Ok(None);
            };
            let Some((rows, at)) = field(at)? else {
                return Ok(None);
            };
            let cols = u16::try_from(cols).map_err(|e| e.to_string())?;
            let rows = u16::try_from(rows).map_err(|e| e.to_string())?;
            Ok(Some((Msg::Resize { cols, rows }, at)))
        }
        b'2' => Ok(Some((Msg::Ping, 1))),
        other => Err(format!("unknown message type '{}'", char::from(other))),
    }
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[test]
    fn the_auth_line_then_messages_however_they_are_split() {
        let all = b"root@pam:PVEVNC:ABC::sig\n0:5:ls -l1:80:24:20:1:\r";
        let mut whole = Reader::default();
        let want = vec![
            Msg::Auth {
                user: "root@pam".into(),
                ticket: "PVEVNC:ABC::sig".into(),
            },
            Msg::Input(b"ls -l".to_vec()),
            Msg::Resize { cols: 80, rows: 24 },
            Msg::Ping,
            Msg::Input(b"\r".to_vec()),
        ];
        assert_eq!(whole.input(all).expect("valid"), want);
        let mut bytewise = Reader::default();
        let mut got = Vec::new();
        for b in all.iter() {
            got.extend(bytewise.input(&[*b]).expect("valid"));
        }
        assert_eq!(got, want);
    }

    #[rstest]
    #[case(b"nocolon\n".to_vec())]
    #[case(b"u:t\n9".to_vec())]
    #[case(b"u:t\n0:x:".to_vec())]
    #[case(b"u:t\n1:99999:1:".to_vec())]
    fn malformed_messages_are_refused(#[case] bytes: Vec<u8>) {
        assert!(Reader::default().input(&bytes).is_err());
    }
}
