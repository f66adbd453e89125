//! The answers of `/cluster/replication` and `/nodes/{node}/replication`
//! as pve-manager writes them (`API2/ReplicationConfig.pm`,
//! `API2/Replication.pm`): the model's jobs, states and logs turned into
//! JSON, keys in PVE's order, flags as 0/1.

use serde_json::{Value, json};

use crate::model::replication::{Job, StatusLine};

/// A number as PVE prints it: whole ones without a fraction.
fn number(r: f64) -> Value {
    if r.fract() == 0.0 && r.abs() < 1e15 {
        #[allow(clippy::cast_possible_truncation)]
        let n = r as i64;
        json!(n)
    } else {
        json!(r)
    }
}

/// The job as the API lists it (`type`, `id`, `guest`, `jobnum` and the
/// options that are set).
pub fn job(id: &str, job: &Job) -> Value {
    let mut v = json!({
        "id": id,
        "type": "local",
        "guest": job.guest(),
        "jobnum": job.jobnum(),
        "target": job.target(),
    });
    if let Some(s) = job.schedule_set() {
        v["schedule"] = json!(s);
    }
    if let Some(r) = job.rate() {
        v["rate"] = number(r);
    }
    if let Some(c) = job.comment() {
        v["comment"] = json!(c);
    }
    if let Some(d) = job.disable_set() {
        v["disable"] = json!(u8::from(d));
    }
    if let Some(r) = job.remove_job() {
        v["remove_job"] = json!(r);
    }
    if let Some(s) = job.source() {
        v["source"] = json!(s);
    }
    v
}

/// `GET /cluster/replication/{id}`: the job with the file's digest.
pub fn read(id: &str, j: &Job, digest: &str) -> Value {
    let mut v = job(id, j);
    v["digest"] = json!(digest);
    v
}

/// A job's line of `GET /nodes/{node}/replication` (`extract_job_status`).
pub fn status_line(l: &StatusLine) -> Value {
    let st = &l.state;
    let mut v = job(&l.id, &l.job);
    v["vmtype"] = json!(l.vmtype);
    v["next_sync"] = json!(l.next_sync);
    v["last_sync"] = json!(st.last_sync);
    v["last_try"] = json!(st.last_try);
    v["fail_count"] = json!(st.fail_count);
    if let Some(e) = &st.error {
        v["error"] = json!(e);
    }
    if let Some(d) = st.duration {
        v["duration"] = json!(d);
    }
    v
}

/// The lines of a job's log as `dump_logfile` answers them: `[{n, t}]`.
pub fn log(lines: &[(usize, &str)]) -> Vec<Value> {
    lines
        .iter()
        .map(|(n, t)| json!({ "n": n, "t": t }))
        .collect()
}
