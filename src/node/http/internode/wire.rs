//! The frames a link carries, encoded by hand: a hello (the secret), requests (id, sender,
//! path, optional JSON body) and replies (id, status, body).

use crate::node::http::inbox::MAX_ANSWER;
use bytes::{Buf, BufMut, Bytes, BytesMut};
use tokio_util::codec::LengthDelimitedCodec;

/// The largest reply frame: an answer's body and room for the frame's own fields.
const MAX_REPLY: usize = MAX_ANSWER + 64;

/// The largest request frame a node reads: more than the router's body and target limits
/// together, far less than a reply may be.
const MAX_REQUEST: usize = 128 * 1024;

/// The codec a link's requests are framed with (the hello too).
pub fn request_codec() -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder()
        .max_frame_length(MAX_REQUEST)
        .new_codec()
}

/// The codec a link's replies are framed with.
pub fn reply_codec() -> LengthDelimitedCodec {
    LengthDelimitedCodec::builder()
        .max_frame_length(MAX_REPLY)
        .new_codec()
}

/// The first frame of a link: the cluster's secret, if it has one.
pub fn hello(secret: Option<&str>) -> Bytes {
    Bytes::copy_from_slice(secret.unwrap_or_default().as_bytes())
}

/// The secret a hello frame carries (`None`: empty).
pub fn read_hello(frame: &[u8]) -> Result<Option<String>, String> {
    let secret = std::str::from_utf8(frame).map_err(|_| "the hello is not UTF-8".to_string())?;
    Ok((!secret.is_empty()).then(|| secret.to_string()))
}

/// One request on a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Matches the reply to the request.
    pub id: u64,
    /// The sending node's id.
    pub from: String,
    /// The path and query, such as `/internal/apply`.
    pub path: String,
    /// The JSON body (a POST); none for a GET.
    pub body: Option<Bytes>,
}

/// One reply on a link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The request's id.
    pub id: u64,
    /// The HTTP status the router answered.
    pub status: u16,
    /// The answer's body.
    pub body: Bytes,
}

impl Request {
    /// The frame.
    pub fn encode(&self) -> Bytes {
        let body = self.body.as_ref().map_or(0, Bytes::len);
        let mut out = BytesMut::with_capacity(16 + self.from.len() + self.path.len() + body);
        out.put_u64(self.id);
        put_text(&mut out, &self.from);
        put_text(&mut out, &self.path);
        match &self.body {
            Some(body) => {
                out.put_u8(1);
                out.put_slice(body);
            }
            None => out.put_u8(0),
        }
        out.freeze()
    }

    /// The request a frame holds.
    pub fn decode(mut frame: Bytes) -> Result<Request, String> {
        let id = take_u64(&mut frame)?;
        let from = take_text(&mut frame)?;
        let path = take_text(&mut frame)?;
        let body = match take_u8(&mut frame)? {
            0 => None,
            1 => Some(frame),
            other => return Err(format!("a request's body flag is {other}, not 0 or 1")),
        };
        Ok(Request {
            id,
            from,
            path,
            body,
        })
    }
}

impl Reply {
    /// The frame.
    pub fn encode(&self) -> Bytes {
        let mut out = BytesMut::with_capacity(10 + self.body.len());
        out.put_u64(self.id);
        out.put_u16(self.status);
        out.put_slice(&self.body);
        out.freeze()
    }

    /// The reply a frame holds.
    pub fn decode(mut frame: Bytes) -> Result<Reply, String> {
        let id = take_u64(&mut frame)?;
        if frame.remaining() < 2 {
            return Err("a reply ends before its status".to_string());
        }
        let status = frame.get_u16();
        Ok(Reply {
            id,
            status,
            body: frame,
        })
    }
}

fn put_text(out: &mut BytesMut, text: &str) {
    // Ids and paths are short; one longer than a u16 counts is cut at the limit.
    let bytes = &text.as_bytes()[..text.len().min(u16::MAX as usize)];
    out.put_u16(bytes.len() as u16);
    out.put_slice(bytes);
}

fn take_u8(frame: &mut Bytes) -> Result<u8, String> {
    match frame.remaining() {
        0 => Err("a frame ends early".to_string()),
        _ => Ok(frame.get_u8()),
    }
}

fn take_u64(frame: &mut Bytes) -> Result<u64, String> {
    match frame.remaining() {
        n if n < 8 => Err("a frame ends before its id".to_string()),
        _ => Ok(frame.get_u64()),
    }
}

fn take_text(frame: &mut Bytes) -> Result<String, String> {
    if frame.remaining() < 2 {
        return Err("a frame ends before a text's length".to_string());
    }
    let len = frame.get_u16() as usize;
    if frame.remaining() < len {
        return Err("a frame ends inside a text".to_string());
    }
    let text = frame.split_to(len);
    String::from_utf8(text.to_vec()).map_err(|_| "a text is not UTF-8".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_replies_come_back_as_they_were_sent() {
        for body in [
            None,
            Some(Bytes::from_static(b"{\"a\":1}")),
            Some(Bytes::new()),
        ] {
            let request = Request {
                id: 7,
                from: "n2".into(),
                path: "/internal/read/p?cell=c".into(),
                body,
            };
            assert_eq!(Request::decode(request.encode()), Ok(request));
        }
        let reply = Reply {
            id: u64::MAX,
            status: 503,
            body: Bytes::from_static(b"{}"),
        };
        assert_eq!(Reply::decode(reply.encode()), Ok(reply));
        assert_eq!(
            read_hello(&hello(Some("s3cret"))),
            Ok(Some("s3cret".into()))
        );
        assert_eq!(read_hello(&hello(None)), Ok(None));
    }

    #[test]
    fn a_cut_or_garbled_frame_is_an_error_not_a_panic() {
        let request = Request {
            id: 1,
            from: "n1".into(),
            path: "/internal/apply".into(),
            body: Some(Bytes::from_static(b"{}")),
        }
        .encode();
        for end in 0..request.len() - 2 {
            assert!(
                Request::decode(request.slice(..end)).is_err(),
                "cut at {end}"
            );
        }
        let mut flag = BytesMut::from(&request[..]);
        let at = 8 + 2 + 2 + 2 + "/internal/apply".len();
        flag[at] = 9;
        assert!(Request::decode(flag.freeze()).is_err());
        assert!(Reply::decode(Bytes::from_static(&[0, 0, 0, 0, 0, 0, 0, 1, 2])).is_err());
    }
}
