use rstest::rstest;

use super::*;

#[rstest]
#[case("backup/vm/100/2026-11-29T18:00:00Z", Ok(("vm", "100", 1_795_975_200)))]
#[case("backup/ct/200/2026-01-01T00:00:00Z", Ok(("ct", "200", 1_767_225_600)))]
#[case("backup/vm/100/2026-11-29 18:00:00", Err(()))]
#[case("vm/100/2026-11-29T18:00:00Z", Err(()))]
#[case("backup/vm/1_0/2026-11-29T18:00:00Z", Err(()))]
fn volume_names_as_the_plugin_parses_them(
    #[case] name: &str,
    #[case] want: Result<(&str, &str, i64), ()>,
) {
    match (parse_volname(name), want) {
        (Ok((t, id, time)), Ok((wt, wid, wtime))) => {
            assert_eq!((t.as_str(), id.as_str(), time), (wt, wid, wtime));
            assert_eq!(rfc3339(time), name.rsplit('/').next().unwrap_or_default());
        }
        (Err(e), Err(())) => {
            assert_eq!(e, format!("unable to parse PBS volume name '{name}'"));
        }
        (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
    }
}

#[rstest]
#[case(&[("server", "10.0.0.5"), ("datastore", "store1")], "root@pam@10.0.0.5:store1")]
#[case(&[("server", "pbs"), ("datastore", "s"), ("port", "8008"), ("username", "bk@pbs")], "bk@pbs@pbs:8008:s")]
#[case(&[("server", "fd00::5"), ("datastore", "s"), ("port", "8007")], "root@pam@[fd00::5]:s")]
fn repositories_as_get_repository_writes_them(#[case] opts: &[(&str, &str)], #[case] want: &str) {
    let s = Storage {
        storage: "b".into(),
        kind: "pbs".into(),
        content: vec!["backup".into()],
        shared: true,
        nodes: None,
        disable: false,
        total: 0,
        used: 0,
        options: opts
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect(),
    };
    assert_eq!(repository(&s), want);
}

#[test]
fn a_server_is_declared_once() {
    let mut p = Pbs::default();
    let server = Server {
        name: "pbs1".into(),
        address: Some("127.0.0.5".into()),
        port: None,
        fingerprint: None,
        datastores: BTreeMap::new(),
    };
    assert_eq!(p.declare(server.clone()), Ok(()));
    assert_eq!(
        p.declare(server),
        Err("server 'pbs1' is declared twice".into())
    );
}
