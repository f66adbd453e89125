//! The RFB (VNC) server behind a VNC console: versions 3.3, 3.7 and
//! 3.8, VNC authentication with the console's password (what QEMU's
//! display and `vncterm -notls` ask), the client's messages, and raw
//! framebuffer updates of the console's [`Screen`] in the client's
//! pixel format. Sans I/O: bytes in, bytes and events out.

use des::cipher::generic_array::GenericArray;
use des::cipher::{BlockEncrypt, KeyInit};

use super::screen::Screen;

/// What the server says first.
pub const VERSION: &[u8] = b"RFB 003.008\n";

/// The colour of the text and of the background.
const FG: (u8, u8, u8) = (0xaa, 0xaa, 0xaa);
const BG: (u8, u8, u8) = (0, 0, 0);

/// A pixel format (RFB's `PIXEL_FORMAT`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PixelFormat {
    bpp: u8,
    depth: u8,
    big_endian: bool,
    true_colour: bool,
    max: [u16; 3],
    shift: [u8; 3],
}

impl Default for PixelFormat {
    /// QEMU's: 32 bits, depth 24, little-endian, red at bit 16.
    fn default() -> Self {
        Self {
            bpp: 32,
            depth: 24,
            big_endian: false,
            true_colour: true,
            max: [255; 3],
            shift: [16, 8, 0],
        }
    }
}

impl PixelFormat {
    fn read(b: &[u8]) -> Self {
        Self {
            bpp: b[0],
            depth: b[1],
            big_endian: b[2] != 0,
            true_colour: b[3] != 0,
            max: [
                u16::from_be_bytes([b[4], b[5]]),
                u16::from_be_bytes([b[6], b[7]]),
                u16::from_be_bytes([b[8], b[9]]),
            ],
            shift: [b[10], b[11], b[12]],
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&[
            self.bpp,
            self.depth,
            u8::from(self.big_endian),
            u8::from(self.true_colour),
        ]);
        for m in self.max {
            out.extend_from_slice(&m.to_be_bytes());
        }
        out.extend_from_slice(&self.shift);
        out.extend_from_slice(&[0, 0, 0]);
    }

    /// The bytes of one pixel of colour `rgb`.
    fn pixel(&self, rgb: (u8, u8, u8)) -> Vec<u8> {
        let v: u32 = if self.true_colour {
            [rgb.0, rgb.1, rgb.2]
                .iter()
                .zip(self.max)
                .zip(self.shift)
                .map(|((c, max), shift)| {
                    let scaled = u32::from(*c) * u32::from(max) / 255;
                    scaled.checked_shl(u32::from(shift)).unwrap_or(0)
                })
                .fold(0, |a, b| a | b)
        } else {
            u32::from(rgb != BG)
        };
        let n = usize::from(self.bpp / 8).clamp(1, 4);
        if self.big_endian {
            v.to_be_bytes()[4 - n..].to_vec()
        } else {
            v.to_le_bytes()[..n].to_vec()
        }
    }
}

/// The answer to a VNC authentication challenge for `password`: the
/// challenge encrypted with DES under the password's first eight bytes,
/// each bit-reversed (as every VNC client and server does).
pub fn vnc_response(password: &str, challenge: &[u8; 16]) -> [u8; 16] {
    let mut key = [0u8; 8];
    for (k, b) in key.iter_mut().zip(password.bytes()) {
        *k = b.reverse_bits();
    }
    let mut out = *challenge;
    if let Ok(cipher) = des::Des::new_from_slice(&key) {
        for block in out.chunks_mut(8) {
            cipher.encrypt_block(GenericArray::from_mut_slice(block));
        }
    }
    out
}

/// What the client did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A key pressed or released (an X keysym).
    Key {
        /// Pressed.
        down: bool,
        /// The keysym.
        keysym: u32,
    },
    /// The pointer moved or a button changed.
    Pointer {
        /// The buttons held.
        buttons: u8,
        /// Where.
        x: u16,
        /// Where.
        y: u16,
    },
    /// Text for the clipboard.
    Cut(Vec<u8>),
}

/// What reading the client's bytes gave.
#[derive(Debug, Default)]
pub struct Step {
    /// Bytes for the client.
    pub send: Vec<u8>,
    /// What the client did.
    pub events: Vec<Event>,
    /// Why the server closes the connection, if it does.
    pub close: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Version,
    Security,
    Response,
    ClientInit,
    Normal,
    Closed,
}

/// One client's RFB session.
#[derive(Debug)]
pub struct Rfb {
    stage: Stage,
    minor: u8,
    buf: Vec<u8>,
    password: String,
    challenge: [u8; 16],
    name: String,
    pf: PixelFormat,
    /// An update the client waits for: whether all of the screen.
    asked: Option<bool>,
}

impl Rfb {
    /// A session for a desktop named `name`, asking `password` against
    /// `challenge`. The server sends [`VERSION`] first.
    pub fn new(name: &str, password: &str, challenge: [u8; 16]) -> Self {
        Self {
            stage: Stage::Version,
            minor: 8,
            buf: Vec::new(),
            password: password.to_string(),
            challenge,
            name: name.to_string(),
            pf: PixelFormat::default(),
            asked: None,
        }
    }

    /// Whether the handshake is over.
    #[cfg(any(test, feature = "internals"))]
    pub fn ready(&self) -> bool {
        self.stage == Stage::Normal
    }

    /// Reads the client's bytes.
    pub fn input(&mut self, bytes: &[u8], screen: &Screen) -> Step {
        self.buf.extend_from_slice(bytes);
        let mut step = Step::default();
        while step.close.is_none() && self.stage != Stage::Closed {
            let used = self.one(&mut step, screen);
            if used == 0 {
                break;
            }
            self.buf.drain(..used);
        }
        if step.close.is_some() {
            self.stage = Stage::Closed;
        }
        step
    }

    /// Reads one message if all of it is here: the bytes it took.
    fn one(&mut self, step: &mut Step, screen: &Screen) -> usize {
        let b = &self.buf;
        match self.stage {
            Stage::Version => {
                if b.len() < 12 {
                    return 0;
                }
                self.minor = match &b[..12] {
                    b"RFB 003.008\n" => 8,
                    b"RFB 003.007\n" => 7,
                    b"RFB 003.003\n" => 3,
                    _ => {
                        step.close = Some("unsupported RFB version".into());
                        return 12;
                    }
                };
                if self.minor == 3 {
                    // 3.3: the server names the type, then challenges.
                    step.send.extend_from_slice(&2u32.to_be_bytes());
                    step.send.extend_from_slice(&self.challenge);
                    self.stage = Stage::Response;
                } else {
                    step.send.extend_from_slice(&[1, 2]);
                    self.stage = Stage::Security;
                }
                12
            }
            Stage::Security => {
                if b.is_empty() {
                    return 0;
                }
                if b[0] != 2 {
                    step.send.extend_from_slice(&1u32.to_be_bytes());
                    if self.minor == 8 {
                        reason(&mut step.send, "Invalid security type");
                    }
                    step.close = Some("invalid security type".into());
                    return 1;
                }
                step.send.extend_from_slice(&self.challenge);
                self.stage = Stage::Response;
                1
            }
            Stage::Response => {
                if b.len() < 16 {
                    return 0;
                }
                let want = vnc_response(&self.password, &self.challenge);
                if b[..16] == want {
                    step.send.extend_from_slice(&0u32.to_be_bytes());
                    self.stage = Stage::ClientInit;
                } else {
                    step.send.extend_from_slice(&1u32.to_be_bytes());
                    if self.minor == 8 {
                        reason(&mut step.send, "Authentication failed");
                    }
                    step.close = Some("authentication failed".into());
                }
                16
            }
            Stage::ClientInit => {
                if b.is_empty() {
                    return 0;
                }
                let (w, h) = (screen.width(), screen.height());
                step.send
                    .extend_from_slice(&u16::try_from(w).unwrap_or(u16::MAX).to_be_bytes());
                step.send
                    .extend_from_slice(&u16::try_from(h).unwrap_or(u16::MAX).to_be_bytes());
                self.pf.write(&mut step.send);
                reason(&mut step.send, &self.name);
                self.stage = Stage::Normal;
                1
            }
            Stage::Normal => self.message(step),
            Stage::Closed => 0,
        }
    }

    /// One client-to-server message.
    fn message(&mut self, step: &mut Step) -> usize {
        let b = &self.buf;
        let Some(&kind) = b.first() else {
            return 0;
        };
        let need = match kind {
            0 => 20,
            2 => {
                if b.len() < 4 {
                    return 0;
                }
                4 + 4 * usize::from(u16::from_be_bytes([b[2], b[3]]))
            }
            3 => 10,
            4 => 8,
            5 => 6,
            6 => {
                if b.len() < 8 {
                    return 0;
                }
                let n = u32::from_be_bytes([b[4], b[5], b[6], b[7]]);
                match usize::try_from(n) {
                    Ok(n) if n <= 1 << 20 => 8 + n,
                    _ => {
                        step.close = Some("clipboard text too long".into());
                        return 0;
                    }
                }
            }
            other => {
                step.close = Some(format!("unknown message type {other}"));
                return 0;
            }
        };
        if b.len() < need {
            return 0;
        }
        let m = &b[..need];
        match kind {
            0 => self.pf = PixelFormat::read(&m[4..20]),
            3 => {
                let full = m[1] == 0;
                self.asked = Some(full || self.asked == Some(true));
            }
            4 => step.events.push(Event::Key {
                down: m[1] != 0,
                keysym: u32::from_be_bytes([m[4], m[5], m[6], m[7]]),
            }),
            5 => step.events.push(Event::Pointer {
                buttons: m[1],
                x: u16::from_be_bytes([m[2], m[3]]),
                y: u16::from_be_bytes([m[4], m[5]]),
            }),
            6 => step.events.push(Event::Cut(m[8..].to_vec())),
            _ => {}
        }
        need
    }

    /// The update the client waits for, if it asked for one and there is
    /// something to show: all of the screen when it asked so, else the
    /// rows that changed.
    pub fn update(&mut self, screen: &mut Screen) -> Vec<u8> {
        let Some(full) = self.asked else {
            return Vec::new();
        };
        if self.stage != Stage::Normal {
            return Vec::new();
        }
        let rows = if full {
            let _ = screen.take_dirty();
            Some((0, screen.height()))
        } else {
            screen.take_dirty()
        };
        let Some((y0, h)) = rows else {
            return Vec::new();
        };
        self.asked = None;
        let w = screen.width();
        let (fg, bg) = (self.pf.pixel(FG), self.pf.pixel(BG));
        let mut out = Vec::with_capacity(16 + w * h * fg.len());
        out.extend_from_slice(&[0, 0, 0, 1]);
        for v in [0, y0, w, h] {
            out.extend_from_slice(&u16::try_from(v).unwrap_or(u16::MAX).to_be_bytes());
        }
        out.extend_from_slice(&0i32.to_be_bytes());
        for y in y0..y0 + h {
            for x in 0..w {
                out.extend_from_slice(if screen.lit(x, y) { &fg } else { &bg });
            }
        }
        out
    }
}

/// A length-prefixed string (a failure's reason, the desktop's name).
fn reason(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(&u32::try_from(text.len()).unwrap_or(0).to_be_bytes());
    out.extend_from_slice(text.as_bytes());
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    const CHALLENGE: [u8; 16] = *b"0123456789abcdef";

    fn screen() -> Screen {
        Screen::new(720, 400, 9)
    }

    /// Runs the handshake as a 3.8 client with `password`.
    fn handshake(rfb: &mut Rfb, s: &Screen, password: &str) -> Step {
        let step = rfb.input(b"RFB 003.008\n", s);
        assert_eq!(step.send, vec![1, 2], "one type: VNC authentication");
        assert_eq!(rfb.input(&[2], s).send, CHALLENGE.to_vec());
        rfb.input(&vnc_response(password, &CHALLENGE), s)
    }

    #[test]
    fn des_of_the_challenge_is_what_vnc_clients_send() {
        // Known answer: password "password", challenge of zeros.
        let r = vnc_response("password", &[0; 16]);
        assert_eq!(hex::encode(&r[..8]), hex::encode(&r[8..]));
        assert_ne!(r, [0; 16]);
        // Only the first eight characters count: a PVE ticket behind the
        // password does not change the answer.
        assert_eq!(
            vnc_response("abcdefgh:PVEVNC:xyz", &CHALLENGE),
            vnc_response("abcdefgh", &CHALLENGE)
        );
    }

    #[test]
    fn the_right_password_gets_the_desktop_and_its_updates() {
        let mut s = screen();
        s.write(b"vm100 login: ");
        let mut rfb = Rfb::new("vm100", "secret12", CHALLENGE);
        let step = handshake(&mut rfb, &s, "secret12");
        assert_eq!(step.send, vec![0, 0, 0, 0]);
        let init = rfb.input(&[1], &s).send;
        assert_eq!(&init[..4], &[2, 208, 1, 144], "720x400");
        assert_eq!(&init[24..], b"vm100");
        assert!(rfb.ready());
        // Nothing until asked.
        assert!(rfb.update(&mut s).is_empty());
        // 8-bit pixels, then a full update of the screen.
        let mut pf = vec![0, 0, 0, 0, 8, 8, 0, 1, 0, 7, 0, 7, 0, 3, 0, 3, 6, 0, 0, 0];
        pf.extend_from_slice(&[3, 0, 0, 0, 0, 0, 2, 208, 1, 144]);
        let step = rfb.input(&pf, &s);
        assert!(step.close.is_none());
        let up = rfb.update(&mut s);
        assert_eq!(up.len(), 16 + 720 * 400);
        // The text's colour in 3-3-2 bits: 4, 4 and 2 of 7, 7 and 3.
        assert!(up[16..].contains(&0b1010_0100), "some text is drawn");
        // An incremental request waits for a change, then gets its rows.
        rfb.input(&[3, 1, 0, 0, 0, 0, 2, 208, 1, 144], &s);
        assert!(rfb.update(&mut s).is_empty());
        s.write(b"r");
        let up = rfb.update(&mut s);
        assert_eq!(&up[4..12], &[0, 0, 0, 0, 2, 208, 0, 16]);
    }

    #[rstest]
    #[case("wrong123")]
    #[case("")]
    fn a_wrong_password_is_refused_with_a_reason(#[case] pw: &str) {
        let s = screen();
        let mut rfb = Rfb::new("vm100", "secret12", CHALLENGE);
        let step = handshake(&mut rfb, &s, pw);
        let mut want = vec![0, 0, 0, 1, 0, 0, 0, 21];
        want.extend_from_slice(b"Authentication failed");
        assert_eq!(step.send, want);
        assert!(step.close.is_some());
    }

    #[test]
    fn keys_pointer_and_clipboard_become_events_and_unknown_messages_close() {
        let s = screen();
        let mut rfb = Rfb::new("x", "pw", CHALLENGE);
        handshake(&mut rfb, &s, "pw");
        rfb.input(&[0], &s);
        let mut msgs = vec![4, 1, 0, 0, 0, 0, 0, 0x61];
        msgs.extend_from_slice(&[5, 1, 0, 10, 0, 20]);
        msgs.extend_from_slice(&[6, 0, 0, 0, 0, 0, 0, 2, b'h', b'i']);
        msgs.extend_from_slice(&[2, 0, 0, 1, 0, 0, 0, 0]);
        let step = rfb.input(&msgs, &s);
        assert_eq!(
            step.events,
            vec![
                Event::Key {
                    down: true,
                    keysym: 0x61
                },
                Event::Pointer {
                    buttons: 1,
                    x: 10,
                    y: 20
                },
                Event::Cut(b"hi".to_vec()),
            ]
        );
        assert_eq!(
            rfb.input(&[99], &s).close.as_deref(),
            Some("unknown message type 99")
        );
    }

    #[test]
    fn version_3_3_names_the_type_itself() {
        let s = screen();
        let mut rfb = Rfb::new("x", "pw", CHALLENGE);
        let step = rfb.input(b"RFB 003.003\n", &s);
        assert_eq!(&step.send[..4], &[0, 0, 0, 2]);
        assert_eq!(&step.send[4..], &CHALLENGE);
        assert!(rfb.input(b"RFB", &s).close.is_none());
    }
}
