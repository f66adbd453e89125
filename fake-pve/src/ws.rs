//! Websocket frames, as pveproxy's `websocket_proxy` speaks them
//! (pve-http-server `APIServer/AnyEvent.pm`): the upgrade's accept key,
//! the client's frames read as pveproxy reads them (masked, unfragmented,
//! without RSV flags, at most 128 KiB), and its own frames (binary,
//! unmasked; a pong for a ping). The consoles and the migration tunnel's
//! target side serve them; the client side (masked frames out, the
//! server's read back) is what a remote migration's source sends, as
//! `proxmox-websocket-tunnel` does.

use base64::Engine as _;
use sha1::{Digest, Sha1};

/// The largest payload pveproxy reads or sends in one frame.
pub const MAX_PAYLOAD: usize = 128 * 1024;

/// RFC 6455's key suffix.
const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// `Sec-WebSocket-Accept` for a client's `Sec-WebSocket-Key`.
pub fn accept_key(key: &str) -> String {
    let mut h = Sha1::new();
    h.update(key.as_bytes());
    h.update(GUID.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(h.finalize())
}

/// What a client's frame carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A text or binary frame's payload: bytes for the program behind.
    Data(Vec<u8>),
    /// A ping, answered with a pong of its payload.
    Ping(Vec<u8>),
    /// A pong.
    Pong,
    /// A close: the connection ends.
    Close,
}

/// The frames a client sent, read from its bytes as they come.
#[derive(Debug, Default)]
pub struct Reader {
    buf: Vec<u8>,
}

impl Reader {
    /// Adds bytes read from the client.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next whole frame, if its bytes are all here.
    ///
    /// # Errors
    /// What pveproxy dies with, after which it drops the connection:
    /// `received fragmented websocket frame`, `received websocket frame
    /// with RSV flags`, `received unmasked websocket frame from client`,
    /// `received too large websocket frame (len = N)`, `received
    /// unhandled websocket opcode N`.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, String> {
        let b = &self.buf;
        if b.len() < 2 {
            return Ok(None);
        }
        let (head, second) = (b[0], b[1]);
        if head & 0x80 == 0 {
            return Err("received fragmented websocket frame".into());
        }
        if head & 0x70 != 0 {
            return Err("received websocket frame with RSV flags".into());
        }
        if second & 0x80 == 0 {
            return Err("received unmasked websocket frame from client".into());
        }
        let (len, mut at) = match second & 0x7f {
            126 => {
                if b.len() < 4 {
                    return Ok(None);
                }
                (u64::from(u16::from_be_bytes([b[2], b[3]])), 4)
            }
            127 => {
                if b.len() < 10 {
                    return Ok(None);
                }
                let mut n = [0u8; 8];
                n.copy_from_slice(&b[2..10]);
                (u64::from_be_bytes(n), 10)
            }
            n => (u64::from(n), 2),
        };
        let len = match usize::try_from(len) {
            Ok(n) if n <= MAX_PAYLOAD => n,
            _ => return Err(format!("received too large websocket frame (len = {len})")),
        };
        if b.len() < at + 4 + len {
            return Ok(None);
        }
        let mask = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        at += 4;
        let payload: Vec<u8> = b[at..at + len]
            .iter()
            .enumerate()
            .map(|(i, x)| x ^ mask[i % 4])
            .collect();
        self.buf.drain(..at + len);
        match head & 0x0f {
            1 | 2 => Ok(Some(Frame::Data(payload))),
            8 => Ok(Some(Frame::Close)),
            9 => Ok(Some(Frame::Ping(payload))),
            10 => Ok(Some(Frame::Pong)),
            op => Err(format!("received unhandled websocket opcode {op}")),
        }
    }
}

/// pveproxy's frames of `data`: binary, unmasked, at most
/// [`MAX_PAYLOAD`] each.
pub fn binary(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + 10);
    for chunk in data.chunks(MAX_PAYLOAD) {
        frame(&mut out, 0x82, chunk);
    }
    out
}

/// The pong for a ping's payload.
pub fn pong(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 2);
    frame(&mut out, 0x8a, payload);
    out
}

fn frame(out: &mut Vec<u8>, head: u8, payload: &[u8]) {
    out.push(head);
    let len = payload.len();
    if len <= 125 {
        out.push(u8::try_from(len).unwrap_or(125));
    } else if let Ok(n) = u16::try_from(len) {
        out.push(126);
        out.extend_from_slice(&n.to_be_bytes());
    } else {
        out.push(127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    out.extend_from_slice(payload);
}

/// A client's frame: masked with `mask` (what a browser sends).
pub fn client_frame(opcode: u8, payload: &[u8], mask: [u8; 4]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 14);
    out.push(0x80 | opcode);
    let len = payload.len();
    if len <= 125 {
        out.push(0x80 | u8::try_from(len).unwrap_or(125));
    } else if let Ok(n) = u16::try_from(len) {
        out.push(0x80 | 126);
        out.extend_from_slice(&n.to_be_bytes());
    } else {
        out.push(0x80 | 127);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
    out.extend_from_slice(&mask);
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    out
}

/// A server's frame read by a client: its opcode and payload, and how
/// many bytes it took; none until it is whole.
pub fn read_server_frame(b: &[u8]) -> Option<(u8, Vec<u8>, usize)> {
    if b.len() < 2 {
        return None;
    }
    let (len, at) = match b[1] & 0x7f {
        126 => (usize::from(u16::from_be_bytes([*b.get(2)?, *b.get(3)?])), 4),
        127 => {
            let mut n = [0u8; 8];
            n.copy_from_slice(b.get(2..10)?);
            (usize::try_from(u64::from_be_bytes(n)).ok()?, 10)
        }
        n => (usize::from(n), 2),
    };
    let payload = b.get(at..at + len)?.to_vec();
    Some((b[0] & 0x0f, payload, at + len))
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    #[test]
    fn the_accept_key_is_rfc_6455s() {
        // The example of RFC 6455, section 1.3.
        assert_eq!(
            accept_key("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    #[rstest]
    #[case(0)]
    #[case(125)]
    #[case(126)]
    #[case(70_000)]
    fn a_masked_frame_reads_back_whole_however_it_arrives(#[case] len: usize) {
        let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
        let bytes = client_frame(2, &payload, [1, 2, 3, 4]);
        let mut r = Reader::default();
        let (a, b) = bytes.split_at(bytes.len() / 2);
        r.push(a);
        assert_eq!(r.next_frame().expect("valid"), None);
        r.push(b);
        assert_eq!(r.next_frame().expect("valid"), Some(Frame::Data(payload)));
        assert_eq!(r.next_frame().expect("valid"), None);
    }

    #[rstest]
    #[case(vec![0x02, 0x80], "received fragmented websocket frame")]
    #[case(vec![0xc2, 0x80], "received websocket frame with RSV flags")]
    #[case(vec![0x82, 0x00], "received unmasked websocket frame from client")]
    #[case(vec![0x83, 0x80, 0, 0, 0, 0], "received unhandled websocket opcode 3")]
    #[case(
        vec![0x82, 0xff, 0, 0, 0, 0, 0, 2, 0, 1],
        "received too large websocket frame (len = 131073)"
    )]
    fn bad_frames_are_refused_as_pveproxy_refuses_them(#[case] bytes: Vec<u8>, #[case] err: &str) {
        let mut r = Reader::default();
        r.push(&bytes);
        assert_eq!(r.next_frame().expect_err("refused"), err);
    }

    #[test]
    fn pings_closes_and_server_frames() {
        let mut r = Reader::default();
        r.push(&client_frame(9, b"hi", [9, 9, 9, 9]));
        r.push(&client_frame(8, &[3, 232], [0, 0, 0, 0]));
        assert_eq!(
            r.next_frame().expect("ok"),
            Some(Frame::Ping(b"hi".to_vec()))
        );
        assert_eq!(r.next_frame().expect("ok"), Some(Frame::Close));
        let out = binary(&[7u8; 300]);
        let (op, p, used) = read_server_frame(&out).expect("whole");
        assert_eq!((op, p.len(), used), (2, 300, out.len()));
        assert_eq!(pong(b"hi"), vec![0x8a, 2, b'h', b'i']);
    }
}
