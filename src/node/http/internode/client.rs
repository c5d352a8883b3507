//! The sending end: one link per peer address, opened on first use and again after it
//! breaks, with many requests in flight on it at once.

use super::wire::{self, Reply as WireReply, Request};
use super::{feed_all, keep_alive, MAGIC};
use crate::node::http::transport::{Message, Reply, Sending, Transport, TransportError};
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;
use tokio::time::Instant;
use tokio_util::codec::{FramedRead, FramedWrite};

/// Messages to peers over links: a request that gets no answer within `timeout` has an
/// unknown fate, as over HTTP; a link on which nothing at all came back meanwhile is dropped,
/// and the next message opens a new one (a partition that heals is not waited out on a
/// connection the kernel is still backing off on).
pub struct LinkTransport {
    timeout: Duration,
    connect_timeout: Duration,
    secret: Option<String>,
    /// The link to each address, behind a lock of its own so that connecting to one peer
    /// holds up no other.
    links: Mutex<HashMap<String, Slot>>,
}

/// Where the link to one address is kept, behind a lock of its own.
type Slot = Arc<tokio::sync::Mutex<LinkSlot>>;

/// The link to one address (none until the first message, or after it broke), and when a
/// connect to it last failed.
#[derive(Default)]
struct LinkSlot {
    link: Option<Arc<Link>>,
    failed: Option<(Instant, String)>,
}

/// One open link.
struct Link {
    outbox: mpsc::UnboundedSender<Bytes>,
    pending: Mutex<HashMap<u64, oneshot::Sender<WireReply>>>,
    next_id: AtomicU64,
    opened: Instant,
    /// When a reply last arrived, in µs since `opened`.
    heard: AtomicU64,
    closed: AtomicBool,
    reader: AbortHandle,
    writer: AbortHandle,
}

impl Link {
    fn heard_since(&self, at: Instant) -> bool {
        let heard = self.opened + Duration::from_micros(self.heard.load(Ordering::Relaxed));
        heard >= at
    }

    /// Marks the link broken, stops its reader and writer (the socket closes with them), and
    /// lets every request waiting on it know.
    fn close(&self) {
        let mut pending = lock(&self.pending);
        self.closed.store(true, Ordering::Relaxed);
        pending.clear();
        self.reader.abort();
        self.writer.abort();
    }

    /// Registers request `id`, unless the link is closed: then nothing was sent on it.
    fn register(&self, id: u64, waiter: oneshot::Sender<WireReply>) -> bool {
        let mut pending = lock(&self.pending);
        if self.closed.load(Ordering::Relaxed) {
            return false;
        }
        pending.insert(id, waiter);
        true
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.reader.abort();
        self.writer.abort();
    }
}

/// Takes a request's place off its link when the request is answered, times out or is
/// dropped by its caller.
struct Waiting<'a> {
    link: &'a Link,
    id: u64,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        lock(&self.link.pending).remove(&self.id);
    }
}

impl LinkTransport {
    /// A transport whose requests give up after `timeout` and whose links carry `secret`.
    pub fn new(timeout: Duration, secret: Option<&str>) -> Self {
        LinkTransport {
            timeout,
            connect_timeout: timeout.min(Duration::from_millis(500)),
            secret: secret.map(str::to_string),
            links: Mutex::new(HashMap::new()),
        }
    }

    /// The open link to `addr`, opened now if there is none. After a failed connect, the
    /// messages to `addr` within the connect timeout fail at once, as not delivered, rather
    /// than each waiting out a connect of its own in turn.
    async fn link(&self, addr: &str) -> Result<Arc<Link>, TransportError> {
        let slot = lock(&self.links)
            .entry(addr.to_string())
            .or_default()
            .clone();
        let mut slot = slot.lock().await;
        if let Some(link) = slot
            .link
            .as_ref()
            .filter(|l| !l.closed.load(Ordering::Relaxed))
        {
            return Ok(link.clone());
        }
        if let Some((at, why)) = &slot.failed {
            if at.elapsed() < self.connect_timeout {
                return Err(TransportError::NotDelivered(why.clone()));
            }
        }
        match self.open(addr).await {
            Ok(link) => {
                *slot = LinkSlot {
                    link: Some(link.clone()),
                    failed: None,
                };
                Ok(link)
            }
            Err(e) => {
                slot.failed = Some((Instant::now(), e.to_string()));
                Err(e)
            }
        }
    }

    /// Connects to `addr` and starts the link's reader and writer.
    async fn open(&self, addr: &str) -> Result<Arc<Link>, TransportError> {
        let not_delivered = |e: String| TransportError::NotDelivered(format!("{addr}: {e}"));
        let connect = TcpStream::connect(addr);
        let mut stream = match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(e)) => return Err(not_delivered(e.to_string())),
            Err(_) => return Err(not_delivered("connect timed out".into())),
        };
        let _ = stream.set_nodelay(true);
        keep_alive(&stream);
        let magic = stream.write_all(&[MAGIC]).await;
        magic.map_err(|e| not_delivered(e.to_string()))?;
        let (read, write) = stream.into_split();
        let mut sink = FramedWrite::new(write, wire::request_codec());
        let hello = sink.send(wire::hello(self.secret.as_deref())).await;
        hello.map_err(|e| not_delivered(e.to_string()))?;
        let (outbox, inbox) = mpsc::unbounded_channel();
        let opened = Instant::now();
        let link = Arc::new_cyclic(|me: &std::sync::Weak<Link>| {
            let frames = FramedRead::new(read, wire::reply_codec());
            let reader = tokio::spawn(read_replies(me.clone(), frames));
            let writer = tokio::spawn(write_frames(me.clone(), sink, inbox));
            Link {
                writer: writer.abort_handle(),
                outbox,
                pending: Mutex::new(HashMap::new()),
                next_id: AtomicU64::new(0),
                opened,
                heard: AtomicU64::new(0),
                closed: AtomicBool::new(false),
                reader: reader.abort_handle(),
            }
        });
        Ok(link)
    }

    /// Sends `message` on a link to `addr` and waits for its reply.
    async fn call(&self, addr: &str, message: Message) -> Result<Reply, TransportError> {
        // A link that closed after it was handed out took nothing: once more on a new one.
        let (link, id, rx) = {
            let mut tries = 0;
            loop {
                let link = self.link(addr).await?;
                let id = link.next_id.fetch_add(1, Ordering::Relaxed);
                let (tx, rx) = oneshot::channel();
                if link.register(id, tx) {
                    break (link, id, rx);
                }
                tries += 1;
                if tries == 2 {
                    let why = format!("{addr}: the link closed before the request was sent");
                    return Err(TransportError::NotDelivered(why));
                }
            }
        };
        let waiting = Waiting { link: &link, id };
        let request = Request {
            id,
            from: message.from,
            path: message.path,
            body: message.body.map(Bytes::from),
        };
        let sent = Instant::now();
        if link.outbox.send(request.encode()).is_err() {
            link.close();
            return Err(TransportError::NotDelivered(format!(
                "{addr}: the link closed"
            )));
        }
        let answer = tokio::time::timeout(self.timeout, rx).await;
        drop(waiting);
        match answer {
            Ok(Ok(reply)) => Ok(Reply {
                status: reply.status,
                body: reply.body.to_vec(),
            }),
            Ok(Err(_)) => Err(TransportError::NoAnswer(format!("{addr}: the link broke"))),
            Err(_) => {
                if !link.heard_since(sent) {
                    link.close();
                }
                Err(TransportError::NoAnswer(format!(
                    "{addr}: no answer within {} ms",
                    self.timeout.as_millis()
                )))
            }
        }
    }
}

impl Transport for LinkTransport {
    fn send<'a>(&'a self, addr: &'a str, message: Message) -> Sending<'a> {
        Box::pin(self.call(addr, message))
    }
}

/// Hands each reply to the request waiting for it, until the link breaks.
async fn read_replies(
    link: std::sync::Weak<Link>,
    mut frames: FramedRead<tokio::net::tcp::OwnedReadHalf, tokio_util::codec::LengthDelimitedCodec>,
) {
    while let Some(Ok(frame)) = frames.next().await {
        let Some(link) = link.upgrade() else {
            return;
        };
        let Ok(reply) = WireReply::decode(frame.freeze()) else {
            break;
        };
        let micros = link.opened.elapsed().as_micros() as u64;
        link.heard.store(micros, Ordering::Relaxed);
        let waiter = lock(&link.pending).remove(&reply.id);
        if let Some(waiter) = waiter {
            let _ = waiter.send(reply);
        }
    }
    if let Some(link) = link.upgrade() {
        link.close();
    }
}

/// Writes the frames queued on a link, as many at once as are waiting, until it breaks.
async fn write_frames<W>(
    link: std::sync::Weak<Link>,
    mut sink: FramedWrite<W, tokio_util::codec::LengthDelimitedCodec>,
    mut inbox: mpsc::UnboundedReceiver<Bytes>,
) where
    W: tokio::io::AsyncWrite + Unpin,
{
    if feed_all(&mut sink, &mut inbox).await.is_err() {
        if let Some(link) = link.upgrade() {
            link.close();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
