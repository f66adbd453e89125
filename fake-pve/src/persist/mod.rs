//! Keeping the world in a data directory (`--data-dir`): a snapshot and
//! an append-only journal of the requests since.
//!
//! Every request that can change the world (any method but GET to the API
//! or the control API; GETs too while fault rules are in force, since
//! they count) is written to the journal *before* it runs, then runs
//! alone at the instant it arrived with random draws from a seed of its
//! own (see [`crate::model::Context`]). Replaying the journal over the snapshot
//! therefore gives the same world: a request acknowledged to a client is
//! never lost, and one that was in flight when the process died is either
//! not there or there whole. A journal that cannot be written refuses the
//! request with a 500 before it changes anything.
//!
//! The directory holds `lock` (held while fake-pve runs: a second process
//! is refused), `keys` (the ticket and CSRF signing keys, so that tickets
//! survive a restart), `snapshot.json` (written to a temporary file,
//! synced and renamed into place) and `journal.log`: records of a 4-byte
//! little-endian length, a 4-byte CRC-32 of the payload and the payload
//! (JSON). A record cut short at the end of the journal (a crash while
//! writing) is dropped with a warning; any other damage stops the start
//! with the file and offset.
//!
//! As PVE keeps `/etc/pve/priv` to root, the directory is its owner's
//! alone, whatever the umask: the directory (and any below it) mode 0700,
//! every file 0600, set again on those already there at start. Nothing
//! in it holds a password or token secret in clear: the world keeps
//! hashes (see [`crate::model::access::shadow`]), and a request that sets
//! or checks a password is journaled with a hash in its place ([`Record`]'s
//! `sealed`). Token secrets are drawn from a record's seed and a key
//! derived from the ticket key, which never leaves `keys`.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::clock::SavedClock;
use crate::model::Cluster;

/// When journal writes are also flushed to the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fsync {
    /// Before every answer: survives power loss.
    Always,
    /// About once a second: a crash of fake-pve loses nothing, power
    /// loss at most the last second.
    #[default]
    Interval,
    /// Left to the operating system.
    Never,
}

/// An `--fsync` value that is none of the modes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown fsync mode '{0}' (always, interval or never)")]
pub struct ParseFsyncError(pub String);

impl std::str::FromStr for Fsync {
    type Err = ParseFsyncError;
    fn from_str(s: &str) -> Result<Self, ParseFsyncError> {
        match s {
            "always" => Ok(Self::Always),
            "interval" => Ok(Self::Interval),
            "never" => Ok(Self::Never),
            other => Err(ParseFsyncError(other.to_string())),
        }
    }
}

/// Which server a journaled request went to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `/api2/...`.
    Api,
    /// `/_fake/...`.
    Control,
    /// What a worker that ran on after its request reached (a cluster
    /// join): not a request, but journaled as one, its document in
    /// `body` and the worker's name in `path`.
    Worker,
}

/// One journaled request: what replaying it needs, and nothing of the
/// connection or the encoding it came in.
///
/// An API call is kept as the API server parsed it: its method, the path
/// below `/api2/<format>`, and the parameters of its query and body (or
/// why the body was refused). A control call keeps its method, path and
/// document. Records written before API calls were kept parsed (with the
/// raw `path`, `query` and body) still replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Position in the journal, from 1.
    pub seq: u64,
    /// API or control.
    pub kind: Kind,
    /// HTTP method.
    pub method: String,
    /// API: the path below `/api2/<format>`, decoded (`/` for the root);
    /// control: the path as received.
    pub path: String,
    /// API: the answer format the path names (`json`, `extjs`, ...; none
    /// when it names none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// API: the parameters of the query and the body, decoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<BTreeMap<String, serde_json::Value>>,
    /// API: why the body was refused before routing (status, message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<(u16, String)>,
    /// Control: the query string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Control: the document's content type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_type: Option<String>,
    /// Control: the document (UTF-8; one that is not is kept as hex in
    /// `body_hex`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub body: String,
    /// A document that is not UTF-8, hex-encoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_hex: Option<String>,
    /// Who made it (`user@realm` or `user@realm!token`).
    #[serde(default)]
    pub who: Option<String>,
    /// The instant it ran at, epoch milliseconds (none for clock moves).
    #[serde(default)]
    pub now_ms: Option<i64>,
    /// The seed of its random draws.
    pub seed: u64,
    /// An upload's file.
    #[serde(default)]
    pub upload: Option<crate::model::storage::content::UploadInfo>,
    /// The parameters that carry the journal's form of a password rather
    /// than the password (see `crate::model::access::shadow::Given`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sealed: Vec<String>,
    /// Whether the request's secrets were drawn with the server's key as
    /// well as its seed (records of older releases drew them from the
    /// seed alone, and replay so).
    #[serde(default)]
    pub keyed: bool,
}

/// An API call as the API server parsed it.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiCall {
    /// The method.
    pub method: String,
    /// The answer format the path names (none when it names none).
    pub format: Option<String>,
    /// The path below `/api2/<format>`, decoded.
    pub path: String,
    /// The parameters of the query and the body, or why the body was
    /// refused (status, message).
    pub params: Result<BTreeMap<String, serde_json::Value>, (u16, String)>,
    /// An upload's file.
    pub upload: Option<crate::model::storage::content::UploadInfo>,
}

/// A control call: fake-pve's own API, whose writes carry documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlCall {
    /// The method.
    pub method: String,
    /// The path as received.
    pub path: String,
    /// The query string.
    pub query: Option<String>,
    /// The document's content type.
    pub content_type: Option<String>,
    /// The document.
    pub body: Vec<u8>,
}

/// What a worker that ran on after its request reached: its name and a
/// document that says it.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerCall {
    /// The worker (`clusterjoin`).
    pub name: String,
    /// What it reached.
    pub doc: serde_json::Value,
}

/// A call to journal: what replaying it needs.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    /// `/api2/...`.
    Api(ApiCall),
    /// `/_fake/...`.
    Control(ControlCall),
    /// A worker's end.
    Worker(WorkerCall),
}

impl Record {
    /// The record of `call` by `who`, run at `now_ms` (none: at the
    /// clock's own time) with random draws from `seed`; its `seq` is set
    /// when it is appended.
    pub fn of(call: Call, who: Option<String>, now_ms: Option<i64>, seed: u64) -> Self {
        let mut rec = Self {
            seq: 0,
            kind: Kind::Api,
            method: String::new(),
            path: String::new(),
            format: None,
            params: None,
            refused: None,
            query: None,
            content_type: None,
            body: String::new(),
            body_hex: None,
            who,
            now_ms,
            seed,
            upload: None,
            sealed: Vec::new(),
            keyed: true,
        };
        match call {
            Call::Api(c) => {
                rec.method = c.method;
                rec.path = c.path;
                rec.format = c.format;
                match c.params {
                    Ok(p) => rec.params = Some(p),
                    Err(r) => rec.refused = Some(r),
                }
                rec.upload = c.upload;
            }
            Call::Worker(w) => {
                rec.kind = Kind::Worker;
                rec.path = w.name;
                rec.body = w.doc.to_string();
            }
            Call::Control(c) => {
                rec.kind = Kind::Control;
                rec.method = c.method;
                rec.path = c.path;
                rec.query = c.query;
                rec.content_type = c.content_type;
                rec.set_body(&c.body);
            }
        }
        rec
    }

    /// The API call again, as it was parsed; `None` for a control call
    /// and for an API call journaled before calls were kept parsed.
    pub fn api_call(&self) -> Option<ApiCall> {
        if self.kind != Kind::Api {
            return None;
        }
        let params = match (&self.params, &self.refused) {
            (Some(p), _) => Ok(p.clone()),
            (None, Some(r)) => Err(r.clone()),
            (None, None) => return None,
        };
        Some(ApiCall {
            method: self.method.clone(),
            format: self.format.clone(),
            path: self.path.clone(),
            params,
            upload: self.upload.clone(),
        })
    }

    /// A worker's end: its name and document; `None` for a request.
    pub fn worker_call(&self) -> Option<WorkerCall> {
        if self.kind != Kind::Worker {
            return None;
        }
        Some(WorkerCall {
            name: self.path.clone(),
            doc: serde_json::from_str(&self.body).ok()?,
        })
    }

    /// The request as it came: a control call, or an API call journaled
    /// before calls were kept parsed.
    pub fn control_call(&self) -> ControlCall {
        ControlCall {
            method: self.method.clone(),
            path: self.path.clone(),
            query: self.query.clone(),
            content_type: self.content_type.clone(),
            body: self.body_bytes(),
        }
    }

    /// The request's context as it ran: its instant (for a request that
    /// moved the clock, the clock's time now) and its seed.
    pub fn context(&self, state: &impl Journaling) -> crate::model::Context {
        let now_ms = self.now_ms.unwrap_or_else(|| state.now_millis());
        let rq = crate::model::Context::journaled(now_ms, self.seed).sealed(self.sealed.clone());
        if self.keyed {
            rq.keyed(state.secret())
        } else {
            rq
        }
    }

    /// The document as bytes.
    pub fn body_bytes(&self) -> Vec<u8> {
        match &self.body_hex {
            Some(h) => hex::decode(h).unwrap_or_default(),
            None => self.body.as_bytes().to_vec(),
        }
    }

    /// Sets the document from bytes.
    pub fn set_body(&mut self, bytes: &[u8]) {
        match std::str::from_utf8(bytes) {
            Ok(s) => s.clone_into(&mut self.body),
            Err(_) => self.body_hex = Some(hex::encode(bytes)),
        }
    }
}

/// Runs `f`, which blocks on the disk, without holding up the other
/// requests of an async worker: on a multi-threaded runtime the worker
/// hands its other tasks on first (`block_in_place`); elsewhere it just
/// runs.
pub fn blocking<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// A checkpoint as saved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedCheckpoint {
    /// The world.
    pub cluster: Cluster,
    /// Its latency profile.
    pub latency: crate::latency::Latency,
    /// Emulated time it was taken at, epoch seconds.
    pub taken: i64,
}

/// What a reset returns to, as saved.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SavedSeed {
    /// The scenario's text (YAML or JSON), when it was a scenario.
    #[serde(default)]
    pub text: Option<String>,
    /// Where it came from.
    #[serde(default)]
    pub source: String,
    /// The world, when the seed was a saved world.
    #[serde(default)]
    pub world: Option<Cluster>,
}

/// `snapshot.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    /// `fake-pve-data`.
    pub format: String,
    /// 1.
    pub version: u32,
    /// The last journal record it includes.
    pub seq: u64,
    /// The world.
    pub cluster: Cluster,
    /// What a reset returns to.
    pub seed: SavedSeed,
    /// The latency profile.
    pub latency: crate::latency::Latency,
    /// The clock.
    pub clock: SavedClock,
    /// The checkpoints.
    #[serde(default)]
    pub checkpoints: BTreeMap<String, SavedCheckpoint>,
}

const SNAPSHOT_FORMAT: &str = "fake-pve-data";

/// The journal grows to at least this many bytes before a snapshot.
const MIN_JOURNAL_BYTES: u64 = 16 << 20;

/// The largest record read back (a longer length is damage).
const MAX_RECORD: u32 = 512 << 20;

/// Why a data directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another process holds the lock.
    #[error("data directory {0} is in use by another fake-pve")]
    Busy(PathBuf),
    /// An I/O error on a file.
    #[error("{path}: {err}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        err: std::io::Error,
    },
    /// A damaged file.
    #[error("{path}: corrupt at offset {offset}: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Byte offset of the damage.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |err| StoreError::Io {
        path: path.to_path_buf(),
        err,
    }
}

struct Journal {
    file: File,
    seq: u64,
    since_snapshot: u64,
    /// Bytes in the journal file.
    bytes: u64,
    /// Bytes of the last snapshot written.
    snapshot_bytes: u64,
    dirty: bool,
}

/// An open data directory.
pub struct Store {
    dir: PathBuf,
    /// `lock`, held (`flock`) while this store is in use.
    lock: File,
    journal: Mutex<Journal>,
    gate: Mutex<()>,
    fsync: Fsync,
    fail_writes: AtomicBool,
    /// Records between snapshots when set (0: by size).
    snapshot_every: std::sync::atomic::AtomicU64,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("dir", &self.dir)
            .field("fsync", &self.fsync)
            .finish_non_exhaustive()
    }
}

/// What an opened data directory held.
pub struct Loaded {
    /// The store, ready to append.
    pub store: Arc<Store>,
    /// The signing keys as saved (made with the `fresh_keys` given to
    /// [`Store::open`] and saved on first use).
    pub keys: String,
    /// The last snapshot, if any.
    pub snapshot: Option<Snapshot>,
    /// The journal records after it.
    pub records: Vec<Record>,
}

impl Store {
    /// Opens (creating) `dir`: takes the lock, reads the keys, the
    /// snapshot and the journal after it.
    ///
    /// # Errors
    /// A directory in use, unreadable or damaged files.
    pub fn open(
        dir: &Path,
        fsync: Fsync,
        fresh_keys: impl FnOnce() -> String,
    ) -> Result<Loaded, StoreError> {
        make_private(dir)?;
        let lock_path = dir.join("lock");
        let lock = private_file()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io(&lock_path))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(StoreError::Busy(dir.to_path_buf()));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(&lock_path)(e)),
        }
        let keys = Self::keys(dir, fresh_keys)?;
        let snapshot = Self::read_snapshot(dir)?;
        let after = snapshot.as_ref().map_or(0, |s| s.seq);
        let journal_path = dir.join("journal.log");
        let mut file = private_file()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(&journal_path)
            .map_err(io(&journal_path))?;
        let (all, good_len) = read_journal(&mut file, &journal_path)?;
        let len = file.metadata().map_err(io(&journal_path))?.len();
        if good_len < len {
            tracing::warn!(
                file = %journal_path.display(),
                offset = good_len,
                "dropping a journal record cut short by a crash"
            );
            file.set_len(good_len).map_err(io(&journal_path))?;
        }
        file.seek(SeekFrom::End(0)).map_err(io(&journal_path))?;
        let seq = all.last().map_or(after, |r| r.seq.max(after));
        let snapshot_bytes = std::fs::metadata(dir.join("snapshot.json")).map_or(0, |m| m.len());
        let records: Vec<Record> = all.into_iter().filter(|r| r.seq > after).collect();
        let store = Arc::new(Store {
            dir: dir.to_path_buf(),
            lock,
            journal: Mutex::new(Journal {
                file,
                seq,
                since_snapshot: records.len() as u64,
                bytes: good_len,
                snapshot_bytes,
                dirty: false,
            }),
            gate: Mutex::new(()),
            fsync,
            fail_writes: AtomicBool::new(false),
            snapshot_every: std::sync::atomic::AtomicU64::new(0),
        });
        if fsync == Fsync::Interval {
            let weak = Arc::downgrade(&store);
            std::thread::Builder::new()
                .name("fake-pve-fsync".into())
                .spawn(move || {
                    while let Some(store) = weak.upgrade() {
                        store.sync_if_dirty();
                        drop(store);
                        std::thread::sleep(Duration::from_secs(1));
                    }
                })
                .map_err(io(dir))?;
        }
        Ok(Loaded {
            store,
            keys,
            snapshot,
            records,
        })
    }

    fn keys(dir: &Path, fresh: impl FnOnce() -> String) -> Result<String, StoreError> {
        let path = dir.join("keys");
        match std::fs::read_to_string(&path) {
            Ok(text) => Ok(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let keys = fresh();
                write_atomically(&path, keys.as_bytes())?;
                Ok(keys)
            }
            Err(e) => Err(io(&path)(e)),
        }
    }

    fn read_snapshot(dir: &Path) -> Result<Option<Snapshot>, StoreError> {
        let path = dir.join("snapshot.json");
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(&path)(e)),
        };
        let snap: Snapshot = serde_json::from_slice(&text).map_err(|e| StoreError::Corrupt {
            path: path.clone(),
            offset: 0,
            reason: format!("line {} column {}: {e}", e.line(), e.column()),
        })?;
        if snap.format != SNAPSHOT_FORMAT || snap.version != 1 {
            return Err(StoreError::Corrupt {
                path,
                offset: 0,
                reason: format!(
                    "format '{}' version {} is not '{SNAPSHOT_FORMAT}' version 1",
                    snap.format, snap.version
                ),
            });
        }
        Ok(Some(snap))
    }

    /// The data directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Makes journal writes fail as on a full disk (for tests of that).
    pub fn simulate_full_disk(&self, full: bool) {
        self.fail_writes.store(full, Ordering::SeqCst);
    }

    /// Held while a request that can change the world runs, so that such
    /// requests run one at a time, in journal order.
    pub fn gate(&self) -> MutexGuard<'_, ()> {
        self.gate
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Lets another process take the directory: called once the server
    /// has stopped and written its last snapshot, so that the directory
    /// is free when shutdown returns, whoever still holds this store for a
    /// moment (the background fsync).
    pub fn release(&self) {
        if let Err(e) = self.lock.unlock() {
            tracing::warn!("unlocking {} failed: {e}", self.dir.display());
        }
    }

    fn journal(&self) -> MutexGuard<'_, Journal> {
        self.journal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Journals `call` and runs `f`: alone (the gate held), at the
    /// instant it arrived unless `clock_moves` (then at the clock's own
    /// time), with random draws from a seed of its own (see
    /// [`crate::model::Context`]); then writes a snapshot when one is due.
    /// The writes block: call it off the async workers (see
    /// [`blocking`]).
    ///
    /// # Errors
    /// `unable to write the journal - ...`, before `f` ran.
    pub fn journaled<R>(
        &self,
        state: &impl Journaling,
        call: Call,
        who: Option<String>,
        clock_moves: bool,
        f: impl FnOnce(crate::model::Context) -> R,
    ) -> Result<R, crate::model::Error> {
        self.journaled_sealed(state, call, who, clock_moves, |_, _| Vec::new(), f)
    }

    /// [`Store::journaled`], with the passwords of an API call sealed
    /// first: `seal` replaces them in the journal's copy of the call with
    /// the form the journal keeps (given the instant the request runs at)
    /// and names the parameters it replaced. It runs with the gate held,
    /// so it sees the model as the request will. A control call's
    /// document is sealed here ([`seal_control`]).
    ///
    /// # Errors
    /// As [`Store::journaled`].
    pub fn journaled_sealed<R>(
        &self,
        state: &impl Journaling,
        mut call: Call,
        who: Option<String>,
        clock_moves: bool,
        seal: impl FnOnce(&mut Call, i64) -> Vec<String>,
        f: impl FnOnce(crate::model::Context) -> R,
    ) -> Result<R, crate::model::Error> {
        let _gate = self.gate();
        let now_ms = (!clock_moves).then(|| state.now_millis());
        let sealed = seal(&mut call, now_ms.unwrap_or_else(|| state.now_millis()));
        if let Call::Control(c) = &mut call {
            seal_control(state, c);
        }
        let mut rec = Record::of(call, who, now_ms, state.next_seed());
        rec.sealed = sealed;
        if let Err(e) = self.append(&mut rec) {
            tracing::error!("journal write failed: {e}");
            return Err(crate::model::Error::failed(format!(
                "unable to write the journal - {e}"
            )));
        }
        // The request runs as it came (its passwords in clear); a replay
        // gets the journal's forms and is told which they are.
        let r = f(rec.context(state).sealed(Vec::new()));
        if self.wants_snapshot()
            && let Err(e) = self.write_snapshot(state.snapshot())
        {
            tracing::error!("snapshot failed: {e}");
        }
        Ok(r)
    }

    /// Appends `rec` (its `seq` is set here); with `--fsync always`, also
    /// flushes it to the disk. Call with the gate held.
    ///
    /// # Errors
    /// When the record could not be written; the journal is left as it
    /// was.
    pub fn append(&self, rec: &mut Record) -> std::io::Result<()> {
        let mut j = self.journal();
        rec.seq = j.seq + 1;
        let payload = serde_json::to_vec(rec).map_err(std::io::Error::other)?;
        let len = u32::try_from(payload.len())
            .ok()
            .filter(|l| *l <= MAX_RECORD)
            .ok_or_else(|| std::io::Error::other("request too large for the journal"))?;
        let mut buf = Vec::with_capacity(payload.len() + 8);
        buf.extend_from_slice(&len.to_le_bytes());
        buf.extend_from_slice(&crc32(&payload).to_le_bytes());
        buf.extend_from_slice(&payload);
        let start = j.file.stream_position()?;
        let written = if self.fail_writes.load(Ordering::SeqCst) {
            Err(std::io::Error::from(std::io::ErrorKind::StorageFull))
        } else {
            j.file.write_all(&buf)
        };
        if let Err(e) = written {
            // Take back whatever part was written.
            let _ = j.file.set_len(start);
            let _ = j.file.seek(SeekFrom::Start(start));
            return Err(e);
        }
        if self.fsync == Fsync::Always {
            j.file.sync_data()?;
        } else {
            j.dirty = true;
        }
        j.seq = rec.seq;
        j.since_snapshot += 1;
        j.bytes += buf.len() as u64;
        Ok(())
    }

    fn sync_if_dirty(&self) {
        let mut j = self.journal();
        if j.dirty {
            if let Err(e) = j.file.sync_data() {
                tracing::warn!("journal fsync failed: {e}");
            }
            j.dirty = false;
        }
    }

    /// Whether the journal has grown enough for a snapshot: as large as
    /// the last snapshot and at least 16 MiB, so that the cost of
    /// snapshots stays in proportion to what is journaled, and replaying
    /// at start reads at most about a world's size of journal.
    pub fn wants_snapshot(&self) -> bool {
        let j = self.journal();
        match self.snapshot_every.load(Ordering::Relaxed) {
            0 => j.bytes >= j.snapshot_bytes.max(MIN_JOURNAL_BYTES),
            n => j.since_snapshot >= n,
        }
    }

    /// A snapshot every `n` records instead (for tests).
    pub fn set_snapshot_every(&self, n: u64) {
        self.snapshot_every.store(n.max(1), Ordering::Relaxed);
    }

    /// Writes a snapshot of everything journaled so far and empties the
    /// journal. Call with the gate held (or before serving).
    ///
    /// # Errors
    /// When the snapshot cannot be written; the journal is then kept.
    pub fn write_snapshot(&self, mut snap: Snapshot) -> Result<(), StoreError> {
        let mut j = self.journal();
        snap.format = SNAPSHOT_FORMAT.into();
        snap.version = 1;
        snap.seq = j.seq;
        let path = self.dir.join("snapshot.json");
        let bytes = serde_json::to_vec(&snap).map_err(|e| io(&path)(std::io::Error::other(e)))?;
        write_atomically(&path, &bytes)?;
        let jpath = self.dir.join("journal.log");
        j.file.set_len(0).map_err(io(&jpath))?;
        j.file.seek(SeekFrom::Start(0)).map_err(io(&jpath))?;
        j.file.sync_all().map_err(io(&jpath))?;
        j.since_snapshot = 0;
        j.bytes = 0;
        j.snapshot_bytes = bytes.len() as u64;
        j.dirty = false;
        Ok(())
    }

    /// The sequence number of the last record.
    pub fn seq(&self) -> u64 {
        self.journal().seq
    }
}

/// What the journal reads of the server whose requests it keeps: the
/// clock, the key secrets are drawn with, the seeds requests draw
/// their randomness from, and the world a snapshot keeps (the server's
/// shared state is one).
pub trait Journaling {
    /// The clock's time, epoch milliseconds.
    fn now_millis(&self) -> i64;
    /// The key passwords and token secrets are sealed with.
    fn secret(&self) -> crate::model::context::SecretKey;
    /// The next request's seed (drawn with the journal's gate held, so
    /// that seeds follow the journal's order).
    fn next_seed(&self) -> u64;
    /// The world as a snapshot writes it, when one is due.
    fn snapshot(&self) -> Snapshot;
}

/// A control call's document as journaled: a state document's or a
/// scenario's passwords and token secrets given in clear are replaced by
/// what the world keeps of them (the same hashes: they are salted with
/// the server's key and what they belong to), so the journal holds none.
fn seal_control(state: &impl Journaling, call: &mut ControlCall) {
    let Ok(text) = std::str::from_utf8(&call.body) else {
        return;
    };
    if let Some(sealed) = crate::model::access::shadow::seal_document(text, &state.secret()) {
        call.body = sealed.into_bytes();
    }
}

/// The mode of the data directory and of any directory below it.
const DIR_MODE: u32 = 0o700;
/// The mode of every file in the data directory.
const FILE_MODE: u32 = 0o600;

/// What fake-pve keeps in a data directory (besides the temporary files
/// of [`write_atomically`], `<name>.tmp`).
pub const FILES: [&str; 7] = [
    "lock",
    "keys",
    "journal.log",
    "snapshot.json",
    "alive",
    "cert.pem",
    "key.pem",
];

/// Creates `dir` (and its missing parents) as its owner's alone, and
/// makes it and the files fake-pve keeps in it so if they are not (a
/// directory of an older release, or made under another umask). Other
/// files in it are left as they are.
///
/// # Errors
/// When the directory cannot be created or a mode cannot be set.
pub fn make_private(dir: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)
        .map_err(io(dir))?;
    let set = |path: &Path, mode: u32| -> Result<(), StoreError> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io(path)(e)),
        };
        if !meta.file_type().is_symlink() && meta.permissions().mode() & 0o7777 != mode {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
                .map_err(io(path))?;
        }
        Ok(())
    };
    set(dir, DIR_MODE)?;
    for name in FILES {
        set(&dir.join(name), FILE_MODE)?;
        set(&dir.join(name).with_extension("tmp"), FILE_MODE)?;
    }
    Ok(())
}

/// Options that create a file as its owner's alone (mode 0600, whatever
/// the umask); an existing file's mode is left (see [`make_private`]).
pub fn private_file() -> OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = OpenOptions::new();
    o.mode(FILE_MODE);
    o
}

/// Writes `bytes` to `path`, created (or truncated) as its owner's
/// alone.
///
/// # Errors
/// When the file cannot be written.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut f = private_file()
        .create(true)
        .write(true)
        .truncate(true)
        .open(path)?;
    // A file made before the directory was private keeps its mode
    // otherwise.
    f.set_permissions(std::fs::Permissions::from_mode(FILE_MODE))?;
    f.write_all(bytes)
}

/// Writes `path` through a temporary file, synced and renamed into place.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let tmp = path.with_extension("tmp");
    let mut f = private_file()
        .create(true)
        .write(true)
        .truncate(true)
        .open(&tmp)
        .map_err(io(&tmp))?;
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(FILE_MODE))
            .map_err(io(&tmp))?;
    }
    f.write_all(bytes).map_err(io(&tmp))?;
    f.sync_all().map_err(io(&tmp))?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(io(path))?;
    if let Some(dir) = path.parent()
        && let Ok(d) = File::open(dir)
    {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Reads every whole record; answers them and the length of the good
/// part. A record cut short at the end is left out; damage elsewhere is
/// an error.
fn read_journal(file: &mut File, path: &Path) -> Result<(Vec<Record>, u64), StoreError> {
    let mut bytes = Vec::new();
    file.seek(SeekFrom::Start(0)).map_err(io(path))?;
    file.read_to_end(&mut bytes).map_err(io(path))?;
    let total = bytes.len();
    let mut records = Vec::new();
    let mut at = 0usize;
    let corrupt = |offset: usize, reason: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        offset: offset as u64,
        reason,
    };
    while at < total {
        if total - at < 8 {
            break; // a header cut short
        }
        let len = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        let crc = u32::from_le_bytes([bytes[at + 4], bytes[at + 5], bytes[at + 6], bytes[at + 7]]);
        let end = at + 8 + len as usize;
        if len > MAX_RECORD {
            return Err(corrupt(at, format!("record length {len} is too large")));
        }
        if end > total {
            break; // a payload cut short
        }
        let payload = &bytes[at + 8..end];
        if crc32(payload) != crc {
            if end == total {
                break; // the last record, torn
            }
            return Err(corrupt(at, "checksum mismatch".into()));
        }
        let rec: Record = serde_json::from_slice(payload)
            .map_err(|e| corrupt(at, format!("unreadable record: {e}")))?;
        if let Some(prev) = records.last().map(|r: &Record| r.seq)
            && rec.seq != prev + 1
        {
            return Err(corrupt(
                at,
                format!("record {} follows record {prev}", rec.seq),
            ));
        }
        records.push(rec);
        at = end;
    }
    Ok((records, at as u64))
}

/// CRC-32 (IEEE 802.3), as zlib computes it.
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

#[cfg(test)]
mod tests;
