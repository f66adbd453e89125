//! The answers PVE builds itself from the agent's replies: `exec`'s
//! pid, `exec-status` (flags as 1, data decoded) and `file-read`.

use serde_json::{Value, json};

use crate::model::agent::{ExecStatus, FileChunk};

/// `exec`: `{pid}`.
pub(crate) fn exec(pid: u32) -> Value {
    json!({ "pid": pid })
}

/// `exec-status`: `exited`, `exitcode`, then the output and errors that
/// are not empty.
pub(crate) fn exec_status(s: &ExecStatus) -> Value {
    let mut out = json!({ "exited": 1, "exitcode": s.exitcode });
    if !s.out.is_empty() {
        out["out-data"] = json!(s.out);
    }
    if !s.err.is_empty() {
        out["err-data"] = json!(s.err);
    }
    out
}

/// `file-read`: `content`, `bytes-read`, and `truncated` before the
/// end of the file.
pub(crate) fn file_read(c: &FileChunk) -> Value {
    let mut out = json!({ "content": c.content, "bytes-read": c.bytes_read });
    if c.truncated {
        out["truncated"] = json!(1);
    }
    out
}
