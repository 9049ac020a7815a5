// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)

//! Scenario: Hugging Face TGI's router as it is built, in Rust on tokio's
//! multi-threaded runtime (written to judge the rules on a runtime they were
//! not written for: session 46), driving tgi_shard.py as `tgi` does.
//!
//! As TGI's router: each connection is a task; it reads a request and sends
//! the SSE headers at once (axum's head goes out while the stream's first
//! poll waits); the request is validated (tokenized, --tokenize-ms of busy
//! work) by one of --validation-workers blocking threads (`spawn_blocking`),
//! reached through a round-robin task and answered on a oneshot channel;
//! the handler appends it to the queue (a task owning the waiting requests,
//! fed by an unbounded channel) and notifies the batching task
//! (`Notify::notify_one`). The batching task takes up to --batch, sends the
//! shard a prefill call for the new ones and, when others run, a decode call,
//! one line each way over a unix socket (gRPC in TGI), and sends each call's
//! tokens to the requests' unbounded channels; each handler writes its
//! tokens as chunked SSE events. tokio's workers steal each other's tasks
//! and wake each other; that is the point of the scenario.
//!
//! Ground truth (--log; CLOCK_MONOTONIC ns): port, t_read, t_enqueue (the
//! append), t_admit (the prefill call that took it was sent),
//! t_first_token_emit / t_last_token_emit (before the write), tokens, io_ns
//! (0), status.

use std::collections::VecDeque;
use std::fs::File;
use std::io::Write;
use std::process::{exit, Command};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use tokio::sync::{mpsc, oneshot, Notify};

/// CLOCK_MONOTONIC ns, as ttftrace's bpf_ktime_get_ns
fn now() -> i64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

/// ms of CPU, as a tokenizer that never yields
fn spin(ms: f64) {
    let end = now() + (ms * 1e6) as i64;
    while now() < end {}
}

fn die(msg: &str) -> ! {
    eprintln!("tgi_rs: {}", msg);
    exit(1)
}

struct Opts {
    port: u16,
    log: String,
    shard: String,
    batch: usize,
    prefill_ms: f64,
    decode_ms: f64,
    tokenize_ms: f64,
    tokens: usize,
    validation_workers: usize,
}

fn num<T: std::str::FromStr>(option: &str, v: &str) -> T {
    v.parse()
        .unwrap_or_else(|_| die(&format!("bad value {} for {}", v, option)))
}

fn parse_opts() -> Opts {
    let mut o = Opts {
        port: 8000,
        log: String::new(),
        shard: String::new(),
        batch: 8,
        prefill_ms: 10.0,
        decode_ms: 2.0,
        tokenize_ms: 1.0,
        tokens: 8,
        validation_workers: 2,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let v = pair
            .get(1)
            .unwrap_or_else(|| die(&format!("{} needs a value", pair[0])));
        match pair[0].as_str() {
            "-p" => o.port = num(&pair[0], v),
            "--log" => o.log = v.clone(),
            "--shard" => o.shard = v.clone(),
            "--batch" => o.batch = num(&pair[0], v),
            "--prefill-ms" => o.prefill_ms = num(&pair[0], v),
            "--decode-ms" => o.decode_ms = num(&pair[0], v),
            "--tokenize-ms" => o.tokenize_ms = num(&pair[0], v),
            "--tokens" => o.tokens = num(&pair[0], v),
            "--validation-workers" => o.validation_workers = num(&pair[0], v),
            other => die(&format!("unknown option {}", other)),
        }
    }
    if o.log.is_empty() || o.shard.is_empty() || o.batch == 0 || o.validation_workers == 0 {
        die("usage: tgi_rs -p PORT --log FILE --shard tgi_shard.py [--batch N] ...");
    }
    o
}

/// Where `ttftrace record --mark` puts its uprobes (run.sh's tgi-rs-mark):
/// the request's append, keyed by its id with its client's port, and the
/// prefill call that takes it. The store keeps each call: a call to an
/// empty function would be dropped.
static MARK_SINK: AtomicU64 = AtomicU64::new(0);

#[no_mangle]
#[inline(never)]
pub extern "C" fn ttft_mark_enqueue(id: u64, port: u64) {
    MARK_SINK.store(id ^ port, Ordering::Relaxed);
}

#[no_mangle]
#[inline(never)]
pub extern "C" fn ttft_mark_dispatch(id: u64) {
    MARK_SINK.store(id, Ordering::Relaxed);
}

struct Token {
    idx: usize,
    last: bool,
    t_admit: i64,
}

/// one request as the batching task sees it (TGI's Entry)
struct Entry {
    id: u64,
    want: usize,
    made: usize,
    t_admit: i64,
    tokens: mpsc::UnboundedSender<Token>,
}

enum QueueCommand {
    Append(Entry),
    NextBatch(usize, oneshot::Sender<Vec<Entry>>),
}

/// TGI's queue: a task owning the waiting requests
async fn queue_task(mut commands: mpsc::UnboundedReceiver<QueueCommand>) {
    let mut waiting = VecDeque::new();
    while let Some(cmd) = commands.recv().await {
        match cmd {
            QueueCommand::Append(e) => waiting.push_back(e),
            QueueCommand::NextBatch(max, reply) => {
                let k = max.min(waiting.len());
                let _ = reply.send(waiting.drain(..k).collect());
            }
        }
    }
}

/// the model shard's connection, a line each way per call
struct Shard {
    conn: BufReader<UnixStream>,
    answer: String,
}

impl Shard {
    async fn call(&mut self, kind: &str, n: usize) {
        let line = format!("{} {}\n", kind, n);
        self.answer.clear();
        let sent = self.conn.get_mut().write_all(line.as_bytes()).await;
        if sent.is_err() || self.conn.read_line(&mut self.answer).await.unwrap_or(0) == 0 {
            die("the shard went away");
        }
    }
}

/// one token to each entry; the ones still running back
fn emit(entries: Vec<Entry>) -> Vec<Entry> {
    let mut kept = Vec::new();
    for mut e in entries {
        e.made += 1;
        let last = e.made >= e.want;
        let _ = e.tokens.send(Token {
            idx: e.made,
            last,
            t_admit: e.t_admit,
        });
        if !last {
            kept.push(e);
        }
    }
    kept
}

async fn next_batch(queue: &mpsc::UnboundedSender<QueueCommand>, max: usize) -> Vec<Entry> {
    let (reply, batch) = oneshot::channel();
    if max == 0 || queue.send(QueueCommand::NextBatch(max, reply)).is_err() {
        return Vec::new();
    }
    batch.await.unwrap_or_default()
}

/// TGI's batching task: idle until notified, then prefill and decode calls
async fn batching_task(
    queue: mpsc::UnboundedSender<QueueCommand>,
    notify: Arc<Notify>,
    mut shard: Shard,
    batch: usize,
) {
    let mut running: Vec<Entry> = Vec::new();
    loop {
        if running.is_empty() {
            notify.notified().await;
        }
        let mut fresh = next_batch(&queue, batch - running.len()).await;
        if !fresh.is_empty() {
            // each stamp beside its marker: a preemption between the two
            // would set the truth and the marker apart
            for e in fresh.iter_mut() {
                e.t_admit = now();
                ttft_mark_dispatch(e.id);
            }
            shard.call("prefill", fresh.len()).await;
            fresh = emit(fresh);
        }
        if !running.is_empty() {
            shard.call("decode", running.len()).await;
            running = emit(running);
        }
        running.extend(fresh);
    }
}

/// a validation job: the worker's answer goes back on it (the spin stands
/// for the tokenizer, which would take the body)
type Validate = oneshot::Sender<()>;

/// TGI's validation workers: blocking threads, handed requests round-robin
fn start_validation(workers: usize, tokenize_ms: f64) -> mpsc::UnboundedSender<Validate> {
    let mut senders = Vec::new();
    for _ in 0..workers {
        let (tx, mut rx) = mpsc::unbounded_channel::<Validate>();
        senders.push(tx);
        tokio::task::spawn_blocking(move || {
            while let Some(reply) = rx.blocking_recv() {
                spin(tokenize_ms);
                let _ = reply.send(());
            }
        });
    }
    let (tx, mut rx) = mpsc::unbounded_channel::<Validate>();
    tokio::spawn(async move {
        let mut i = 0;
        while let Some(v) = rx.recv().await {
            let _ = senders[i % senders.len()].send(v);
            i += 1;
        }
    });
    tx
}

struct Router {
    validation: mpsc::UnboundedSender<Validate>,
    queue: mpsc::UnboundedSender<QueueCommand>,
    notify: Arc<Notify>,
    truth: Mutex<File>,
    tokens: usize,
    next_id: AtomicU64,
}

/// one request's head and body; None at the connection's end
async fn read_request(r: &mut BufReader<OwnedReadHalf>) -> Option<Vec<u8>> {
    let mut line = String::new();
    let mut length = 0;
    loop {
        line.clear();
        if r.read_line(&mut line).await.ok()? == 0 {
            return None;
        }
        if line == "\r\n" {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().ok()?;
        }
    }
    let mut body = vec![0; length];
    r.read_exact(&mut body).await.ok()?;
    Some(body)
}

/// the body's "max_tokens" value, if any
fn max_tokens(body: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(body).ok()?;
    let rest = &text[text.find("\"max_tokens\"")? + 12..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

async fn chunk(w: &mut OwnedWriteHalf, data: &str, end: bool) -> bool {
    let mut out = format!("{:x}\r\n{}\r\n", data.len(), data);
    if end {
        out.push_str("0\r\n\r\n");
    }
    w.write_all(out.as_bytes()).await.is_ok()
}

/// one completion on a connection; false when the connection is done
async fn completion(
    router: &Router,
    r: &mut BufReader<OwnedReadHalf>,
    w: &mut OwnedWriteHalf,
    port: u16,
) -> bool {
    let body = match read_request(r).await {
        Some(b) => b,
        None => return false,
    };
    let t_read = now();
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\
                Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
    if w.write_all(head.as_bytes()).await.is_err() {
        return false;
    }
    let (done, validated) = oneshot::channel();
    if router.validation.send(done).is_err() || validated.await.is_err() {
        die("validation went away");
    }
    let want = max_tokens(&body)
        .filter(|&n| n > 0)
        .unwrap_or(router.tokens);
    let (tokens, mut stream) = mpsc::unbounded_channel();
    let t_enqueue = now();
    let id = router.next_id.fetch_add(1, Ordering::Relaxed);
    ttft_mark_enqueue(id, port as u64);
    let entry = Entry {
        id,
        want,
        made: 0,
        t_admit: 0,
        tokens,
    };
    if router.queue.send(QueueCommand::Append(entry)).is_err() {
        die("the queue went away");
    }
    router.notify.notify_one();
    let (mut t_first, mut t_last, mut t_admit, mut n) = (0, 0, 0, 0);
    while let Some(tok) = stream.recv().await {
        t_last = now();
        if t_first == 0 {
            t_first = t_last;
        }
        t_admit = tok.t_admit;
        let event = format!(
            "data: {{\"choices\":[{{\"index\":0,\"text\":\"tok{}\"}}]}}\n\n",
            tok.idx
        );
        if !chunk(w, &event, false).await {
            return false;
        }
        n += 1;
        if tok.last {
            break;
        }
    }
    if !chunk(w, "data: [DONE]\n\n", true).await {
        return false;
    }
    let row = format!(
        "{},{},{},{},{},{},{},0,ok\n",
        port, t_read, t_enqueue, t_admit, t_first, t_last, n
    );
    let _ = router.truth.lock().unwrap().write_all(row.as_bytes());
    true
}

async fn connection(router: Arc<Router>, stream: TcpStream) {
    let port = stream.peer_addr().map(|a| a.port()).unwrap_or(0);
    let _ = stream.set_nodelay(true);
    let (r, mut w) = stream.into_split();
    let mut r = BufReader::new(r);
    while completion(&router, &mut r, &mut w, port).await {}
}

/// the shard process, connected back to a unix socket of ours
async fn start_shard(o: &Opts) -> Shard {
    let path = std::env::temp_dir().join(format!("ttft-tgi-rs-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).unwrap_or_else(|e| die(&e.to_string()));
    Command::new("/usr/bin/python3")
        .arg(&o.shard)
        .arg("--socket")
        .arg(&path)
        .args([
            "--prefill-ms",
            &o.prefill_ms.to_string(),
            "--decode-ms",
            &o.decode_ms.to_string(),
        ])
        .spawn()
        .unwrap_or_else(|e| die(&format!("the shard: {}", e)));
    let (conn, _) = listener
        .accept()
        .await
        .unwrap_or_else(|e| die(&format!("the shard: {}", e)));
    let _ = std::fs::remove_file(&path);
    Shard {
        conn: BufReader::new(conn),
        answer: String::new(),
    }
}

#[tokio::main]
async fn main() {
    let o = parse_opts();
    let mut truth = File::create(&o.log).unwrap_or_else(|e| die(&format!("{}: {}", o.log, e)));
    let header =
        "port,t_read,t_enqueue,t_admit,t_first_token_emit,t_last_token_emit,tokens,io_ns,status\n";
    truth
        .write_all(header.as_bytes())
        .unwrap_or_else(|e| die(&e.to_string()));
    let (queue, commands) = mpsc::unbounded_channel();
    tokio::spawn(queue_task(commands));
    let notify = Arc::new(Notify::new());
    let shard = start_shard(&o).await;
    tokio::spawn(batching_task(queue.clone(), notify.clone(), shard, o.batch));
    let router = Arc::new(Router {
        validation: start_validation(o.validation_workers, o.tokenize_ms),
        queue,
        notify,
        truth: Mutex::new(truth),
        tokens: o.tokens,
        next_id: AtomicU64::new(1),
    });
    let listener = TcpListener::bind(("127.0.0.1", o.port))
        .await
        .unwrap_or_else(|e| die(&e.to_string()));
    eprintln!("tgi_rs: listening on {}", o.port);
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(connection(router.clone(), stream));
            }
            Err(e) => eprintln!("tgi_rs: accept: {}", e),
        }
    }
}
