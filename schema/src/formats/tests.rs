use super::*;
use rstest::rstest;

#[test]
fn each_named_format_is_found_by_its_name() {
    for (name, kind) in table() {
        let found = named(name).expect("in the index");
        assert!(std::ptr::eq(found, kind), "{name} is in the table twice");
    }
    assert!(named("no-such-format").is_none());
}

#[rstest]
#[case("pve-vmid", "100", None)]
#[case("pve-vmid", "99", Some("value does not look like a valid VM ID\n"))]
#[case("pve-vmid", "0100", Some("value does not look like a valid VM ID\n"))]
#[case("pve-node", "pve-1", None)]
#[case(
    "pve-node",
    "-pve",
    Some("value does not look like a valid node name\n")
)]
#[case("pve-configid", "net0", None)]
#[case("pve-configid", "0net", Some("invalid configuration ID '0net'\n"))]
#[case("pve-configid-list", "net0,scsi1;ide2 tags", None)]
#[case(
    "pve-configid-list",
    "net0,-x",
    Some("invalid configuration ID '-x'\n")
)]
#[case("pve-storage-id", "local-lvm", None)]
#[case(
    "pve-storage-id",
    "l",
    Some("storage ID 'l' cannot be shorter than 2 characters\n")
)]
#[case(
    "pve-storage-id",
    "local_",
    Some("storage ID 'local_' contains illegal characters\n")
)]
#[case("pve-bridge-id", "vmbr0", None)]
#[case("pve-bridge-id", "vm br", Some("invalid bridge ID 'vm br'\n"))]
#[case("mac-addr", "BC:24:11:00:00:01", None)]
#[case(
    "mac-addr",
    "01:24:11:00:00:01",
    Some("value does not look like a valid unicast MAC address\n")
)]
#[case("ipv4", "192.0.2.1", None)]
#[case(
    "ipv4",
    "192.0.2",
    Some("value does not look like a valid IPv4 address\n")
)]
#[case("ipv6", "2001:db8::1", None)]
#[case("ip", "fe80::1", None)]
#[case("ip", "host", Some("value does not look like a valid IP address\n"))]
#[case("CIDR", "192.0.2.0/24", None)]
#[case(
    "CIDR",
    "192.0.2.0/5",
    Some("value does not look like a valid CIDR network\n")
)]
#[case("CIDRv6", "2001:db8::/64", None)]
#[case("ipv4mask", "255.255.255.0", None)]
#[case(
    "ipv4mask",
    "255.0.255.0",
    Some("value does not look like a valid IP netmask\n")
)]
#[case("email", "root@example.com", None)]
#[case(
    "email",
    "root",
    Some("value does not look like a valid email address\n")
)]
#[case("dns-name", "pve.example.com", None)]
#[case(
    "dns-name",
    "-bad.example",
    Some("value does not look like a valid DNS name\n")
)]
#[case("address", "backup.example.com", None)]
#[case(
    "address",
    "a b",
    Some("value does not look like a valid address: a b\n")
)]
#[case("pve-iface", "vmbr0", None)]
#[case("pve-iface", "v", Some("invalid network interface name 'v'\n"))]
#[case("disk-size", "32G", None)]
#[case(
    "disk-size",
    "32X",
    Some("value does not look like a valid disk size: 32X\n")
)]
#[case("pve-userid", "root@pam", None)]
#[case("pve-userid", "ro", Some("user name 'ro' is too short\n"))]
#[case(
    "pve-userid",
    "root",
    Some("value 'root' does not look like a valid user name\n")
)]
#[case("pve-tokenid", "root@pam!ci", None)]
#[case("pve-realm", "p", Some("value does not look like a valid realm\n"))]
#[case(
    "pve-poolid",
    "a/b/c/d",
    Some("pool name 'a/b/c/d' nested too deeply (max levels = 3)\n")
)]
#[case("pve-vlan-id-or-range", "100-200", None)]
#[case(
    "pve-vlan-id-or-range",
    "200-100",
    Some("VLAN range must go from lower to higher tag '200-100'\n")
)]
#[case("pve-vlan-id-or-range", "1", Some("invalid VLAN tag '1'\n"))]
#[case("pve-tag-list", "web;db", None)]
#[case("pve-tag-list", "web;d b!", Some("invalid characters in tag\n"))]
#[case("pve-ipv4-config", "dhcp", None)]
#[case("pve-ipv4-config", "192.0.2.10/24", None)]
#[case(
    "pve-ipv4-config",
    "garbage",
    Some("value does not look like a valid ipv4 network configuration\n")
)]
#[case("pve-ipv6-config", "auto", None)]
#[case(
    "pve-ipv6-config",
    "192.0.2.10/24",
    Some("value does not look like a valid ipv6 network configuration\n")
)]
#[case("storage-pair-list", "local:local-lvm,1", None)]
#[case(
    "storage-pair-list",
    "local:x",
    Some(
        "entry 'local:x' contains invalid ID - storage ID 'x' cannot be shorter than 2 characters\n\n\n"
    )
)]
#[case("bridge-pair-list", "vmbr0:vmbr1", None)]
#[case("bridge-pair-list", "vm br", None)]
#[case(
    "bridge-pair",
    "vmbr0:vm!",
    Some("entry 'vmbr0:vm!' contains invalid ID - invalid bridge ID 'vm!'\n\n\n")
)]
#[case("ldap-simple-attr", "uid", None)]
#[case(
    "ldap-simple-attr",
    "mail-x",
    Some("value 'mail-x' does not look like a simple ldap attribute name\n")
)]
#[case("email-or-username", "root", None)]
#[case(
    "email-or-username",
    "a b",
    Some("value does not look like a valid email address or user name\n")
)]
#[case("pve-startup-order", "order=1,up=30,down=60", None)]
#[case("pve-startup-order", "2", None)]
#[case(
    "pve-startup-order",
    "order=1,up=x",
    Some("unable to parse startup options\n")
)]
#[case("pve-calendar-event", "mon..fri 02:30", None)]
#[case("pve-calendar-event", "*/15", None)]
#[case("pve-calendar-event", "daily", None)]
#[case(
    "pve-calendar-event",
    "every day",
    Some("invalid calendar event 'every day' - unable to parse calendar event\n")
)]
#[case(
    "pem-certificate-chain",
    "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
    None
)]
#[case(
    "pem-certificate-chain",
    "garbage",
    Some("not a valid PEM-formatted string.\n")
)]
#[case(
    "pem-string",
    "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    None
)]
#[case("pem-string", "AAAA", Some("not a valid PEM-formatted string.\n"))]
#[case("mac-prefix", "BC:24:11", None)]
#[case(
    "mac-prefix",
    "01:24",
    Some("value is not a valid unicast MAC address prefix\n")
)]
#[case("pve-priv-list", "VM.Audit,Sys.Audit", None)]
#[case("pve-priv", "VM.Fly", Some("invalid privilege 'VM.Fly'\n"))]
#[case("pve-day-of-week-list", "mon,wed", None)]
#[case("pve-day-of-week-list", "mon,xyz", Some("invalid day 'xyz'\n"))]
#[case("pve-command-batch", r#"[{"method":"GET","path":"/version"}]"#, None)]
#[case(
    "pve-command-batch",
    r#"[{"method":"GET"}]"#,
    Some(
        "commands is not a valid array of commands: path: property is missing and it is not optional\n"
    )
)]
#[case("pve-acme-domain", "pve.example.com", None)]
#[case(
    "pve-acme-domain",
    "localhost",
    Some("value 'localhost' does not look like a valid domain name!\n")
)]
#[case("pve-acme-alias", "_acme.example.com", None)]
#[case(
    "pve-acme-alias",
    "x",
    Some("value 'x' does not look like a valid alias name!\n")
)]
#[case("graphite-path", "proxmox.pve", None)]
#[case(
    "graphite-path",
    "a..b",
    Some("value does not look like a valid graphite path\n")
)]
#[case("lxc-ip-with-ll-iface-list", "192.0.2.1 fe80::1%eth0", None)]
#[case(
    "lxc-ip-with-ll-iface",
    "fe80::1%",
    Some("value does not look like a valid IP address\n")
)]
#[case("pve-ct-timezone", "host", None)]
#[case("pve-ct-timezone", "Europe/Vienna", None)]
#[case(
    "pve-ct-timezone",
    "Mars/Base",
    Some("invalid time zone 'Mars/Base'\n")
)]
#[case("pve-lxc-mp-string", "/mnt/data", None)]
#[case(
    "pve-lxc-mp-string",
    "/mnt/../etc",
    Some("/mnt/../etc contains illegal character sequences\n")
)]
#[case("pve-lxc-dev-string", "/dev/ttyUSB0", None)]
#[case(
    "pve-lxc-dev-string",
    "/etc/passwd",
    Some("/etc/passwd is not a valid device path\n")
)]
#[case("pve-replication-job-id", "100-0", None)]
#[case(
    "pve-replication-job-id",
    "99-1",
    Some("invalid replication job id '99-1' (guest IDs < 100 are reserved)\n")
)]
#[case("pve-storage-path-in-property-string", "/srv/share", None)]
#[case(
    "pve-storage-path-in-property-string",
    "srv",
    Some(
        "Value does not look like a valid absolute path. These symbols are currently not allowed in path: ;,=()\n"
    )
)]
#[case("pve-storage-path", "/mnt/pve/nfs", None)]
#[case(
    "pve-storage-path",
    "mnt",
    Some("value does not look like a valid absolute path\n")
)]
#[case("pve-storage-server", "10.0.0.5", None)]
#[case(
    "pve-storage-server",
    "a b",
    Some("value does not look like a valid server name or IP address\n")
)]
#[case("pve-storage-vgname", "pve", None)]
#[case(
    "pve-storage-vgname",
    "-pve",
    Some("lvm name '-pve' contains illegal characters\n")
)]
#[case(
    "pve-storage-portal-dns-list",
    "10.0.0.1:3260 [2001:db8::1]:3260 iscsi.example",
    None
)]
#[case(
    "pve-storage-portal-dns",
    "a b",
    Some("value does not look like a valid portal address\n")
)]
#[case("pve-storage-content-list", "images,rootdir,iso", None)]
#[case(
    "pve-storage-content",
    "movies",
    Some("invalid content type 'movies'\n")
)]
#[case("pve-storage-options", "vers=4.2", None)]
#[case("pve-storage-options", "a b", Some("invalid options 'a b'\n"))]
#[case("pve-volume-id", "local:iso/x.iso", None)]
#[case("pve-volume-id", "x.iso", Some("unable to parse volume ID 'x.iso'\n"))]
#[case("pve-volume-id-or-qm-path", "cdrom", None)]
#[case("pve-volume-id-or-absolute-path", "/var/lib/vz/x.raw", None)]
#[case(
    "pve-volume-id-or-qm-path",
    "x.raw",
    Some("unable to parse volume ID 'x.raw'\n")
)]
#[case("pve-dir-override-list", "iso=isos,backup=dump", None)]
#[case("pve-dir-override", "iso", Some("invalid override 'iso'\n"))]
#[case(
    "pve-dir-override",
    "movies=x",
    Some("invalid content type 'movies'\n")
)]
#[case("pve-storage-zfs-blocksize", "8k", None)]
#[case("pve-storage-zfs-blocksize", "16M", None)]
#[case("pve-storage-zfs-blocksize", "512", None)]
#[case("pve-storage-zfs-blocksize", "", None)]
#[case(
    "pve-storage-zfs-blocksize",
    "256",
    Some(
        "value '256' is not a valid ZFS blocksize. Must be a power of 2 between 512B and 16MiB (e.g., 4k, 8k, 16k, 64k, 1m).\n"
    )
)]
#[case(
    "pve-storage-zfs-blocksize",
    "32m",
    Some(
        "value '32m' is not a valid ZFS blocksize. Must be a power of 2 between 512B and 16MiB (e.g., 4k, 8k, 16k, 64k, 1m).\n"
    )
)]
#[case(
    "pve-storage-zfs-blocksize",
    "12k",
    Some(
        "value '12k' is not a valid ZFS blocksize. Must be a power of 2 between 512B and 16MiB (e.g., 4k, 8k, 16k, 64k, 1m).\n"
    )
)]
#[case(
    "pve-storage-zfs-blocksize",
    "99999999999999999999999999999999999999999k",
    Some(
        "value '99999999999999999999999999999999999999999k' is not a valid ZFS blocksize. Must be a power of 2 between 512B and 16MiB (e.g., 4k, 8k, 16k, 64k, 1m).\n"
    )
)]
#[case(
    "pve-storage-zfs-blocksize",
    "08k",
    Some(
        "invalid ZFS blocksize format '08k'. Use a positive number (no leading zeros) with an optional 'k' or 'm' suffix.\n"
    )
)]
#[case("pve-node-location", "latitude=48.2,longitude=16.37,name=Vienna", None)]
#[case(
    "pve-node-location",
    "latitude=91,longitude=0",
    Some("format error\nlatitude: value must have a maximum value of 90\n")
)]
#[case("pve-cpuset", "0-3,8", None)]
#[case("pve-cpuset", "3-1", Some("unable to parse cpuset option\n"))]
#[case("pve-qm-bootdev-list", "scsi0;net0;hostpci15", None)]
#[case("pve-qm-bootdev", "efidisk0", Some("invalid boot device 'efidisk0'\n"))]
#[case("pve-qm-bootdisk", "virtio15", None)]
#[case("pve-qm-bootdisk", "virtio16", Some("invalid boot disk 'virtio16'\n"))]
#[case("pve-hotplug-features", "network,disk,cpu", None)]
#[case("pve-hotplug-features", "0", None)]
#[case(
    "pve-hotplug-features",
    "network,gpu",
    Some("unable to parse hotplug option\n")
)]
#[case("pve-phys-bits", "host", None)]
#[case(
    "pve-phys-bits",
    "7",
    Some("value must be an integer between 8 and 64 or 'host'\n")
)]
#[case("pve-ha-resource-id-list", "vm:100,ct:101", None)]
#[case(
    "pve-ha-resource-id",
    "100",
    Some("value does not look like a valid ha resource id\n")
)]
#[case("pve-ha-resource-or-vm-id", "100", None)]
#[case(
    "pve-ha-resource-or-vm-id",
    "VM:100",
    Some("value does not look like a valid ha resource id\n")
)]
#[case("pve-ha-node-list", "pve1:2,pve2", None)]
#[case(
    "pve-ha-node",
    "pve1:x",
    Some("value does not look like a valid ha node\n")
)]
#[case(
    "pve-ha-group-node",
    "-pve",
    Some("value does not look like a valid ha group node\n")
)]
#[case("pve-sdn-zone-id", "zone1", None)]
#[case(
    "pve-sdn-zone-id",
    "zone_1",
    Some("zone ID 'zone_1' contains illegal characters\n")
)]
#[case(
    "pve-sdn-vnet-id",
    "vnetvnet1",
    Some("vnet ID 'vnetvnet1' can't be more length than 8 characters\n")
)]
#[case(
    "pve-sdn-controller-id",
    "-c",
    Some("controller ID '-c' contains illegal characters\n")
)]
#[case(
    "pve-sdn-dns-id",
    "d!",
    Some("dns ID 'd!' contains illegal characters\n")
)]
#[case("pve-sdn-ipam-id", "pve", None)]
#[case(
    "pve-sdn-ipam-id",
    "p_",
    Some("ipam ID 'p_' contains illegal characters\n")
)]
#[case("pve-sdn-fabric-id", "fab1", None)]
#[case(
    "pve-sdn-fabric-id",
    "fabric-long",
    Some("Fabric ID 'fabric-long' contains illegal characters\n")
)]
#[case("pve-sdn-wireguard-iface-name", "wg-0", None)]
#[case(
    "pve-sdn-wireguard-iface-name",
    "wireguard0",
    Some(
        "WireGuard interface name 'wireguard0' contains illegal characters or exceeds the eight character limit\n"
    )
)]
#[case(
    "pve-sdn-fabric-wireguard-interface",
    "name=wg0,listen_port=51820,ip=10.0.0.1/24,ip6=fd00::1/64",
    None
)]
#[case("pve-sdn-fabric-wireguard-interface", "name=wg0", None)]
#[case("pve-sdn-prefix-list-id", "pl_in-1", None)]
#[case(
    "pve-sdn-prefix-list-id",
    "only_default",
    Some("prefix list ID 'only_default' is currently reserved and cannot be used\n")
)]
#[case(
    "pve-sdn-prefix-list-id",
    "pl.1",
    Some("prefix list ID 'pl.1' contains illegal characters\n")
)]
#[case("pve-sdn-route-map-id", "rm_out", None)]
#[case(
    "pve-sdn-route-map-id",
    "pve_in",
    Some("route map ID 'pve_in' is currently reserved and cannot be used\n")
)]
#[case(
    "pve-sdn-route-map-id",
    "-rm",
    Some("route map ID '-rm' contains illegal characters\n")
)]
#[case("FullRangeCIDR", "192.0.2.7/24", None)]
#[case(
    "FullRangeCIDR",
    "2001:db8::/129",
    Some("value does not look like a valid CIDR network\n")
)]
#[case(
    "FullRangeCIDR",
    "192.0.2.0",
    Some("value does not look like a valid CIDR network\n")
)]
#[case("FullRangeCIDR", "fd00::1/64", None)]
#[case("pve-sdn-subnet-id", "zone1-10.0.0.0-24", None)]
#[case(
    "pve-sdn-subnet-id",
    "zone1-10.0.0.0-99",
    Some("value does not look like a valid CIDR network\n")
)]
#[case("pve-sdn-isis-net", "49.0001.1921.6800.1002.00", None)]
#[case(
    "pve-sdn-isis-net",
    "49.1",
    Some("value does not look like a valid isis net\n")
)]
#[case("pve-sdn-bgp-rt-list", "65000:1,65000:2", None)]
#[case(
    "pve-sdn-bgp-rt",
    "65000",
    Some("value does not look like a valid bgp route-target\n")
)]
#[case("IPorCIDR", "10.0.0.0/8", None)]
#[case(
    "IPorCIDR",
    "host",
    Some("value does not look like a valid IP address or CIDR network\n")
)]
#[case("IPorCIDRorAlias", "dc/mynet", None)]
#[case(
    "IPorCIDRorAlias",
    "1.2.3.4/",
    Some("value does not look like a valid IP address or CIDR network\n")
)]
#[case("pve-fw-conntrack-helper", "ftp,tftp", None)]
#[case("pve-fw-conntrack-helper", "ftp,", Some("extraneous commas in list\n"))]
#[case("pve-fw-dport-spec", "22,80:90,https", None)]
#[case("pve-fw-dport-spec", "echo-request", None)]
#[case(
    "pve-fw-sport-spec",
    "echo-request",
    Some("invalid port 'echo-request'\n")
)]
#[case(
    "pve-fw-dport-spec",
    "90:80",
    Some("backwards range '90:80' not allowed, did you mean '80:90'?\n")
)]
#[case("pve-fw-sport-spec", "70000", Some("invalid port '70000'\n"))]
#[case("pve-fw-addr-spec", "10.0.0.1,10.0.0.0/24", None)]
#[case("pve-fw-addr-spec", "+ipset1", None)]
#[case(
    "pve-fw-addr-spec",
    "10.0.0.1,2001:db8::1",
    Some("detected mixed ipv4/ipv6 addresses in address list '10.0.0.1,2001:db8::1'\n")
)]
#[case(
    "pve-fw-addr-spec",
    "10.0.0.1-10.0.0.5,10.0.1.1",
    Some("you can't use a range in a list\n")
)]
#[case("pve-fw-protocol-spec", "tcp", None)]
#[case("pve-fw-protocol-spec", "6", None)]
#[case("pve-fw-protocol-spec", "tcpx", Some("unknown protocol 'tcpx'\n"))]
#[case("pve-fw-icmp-type-spec", "echo-request", None)]
#[case(
    "pve-fw-icmp-type-spec",
    "ping",
    Some("invalid icmp-type value 'ping'\n")
)]
#[case("pve-qm-boot", "order=scsi0;net0", None)]
#[case(
    "pve-qm-boot",
    "order=scsi0;foo",
    Some("format error\norder: invalid format - invalid boot device 'foo'\n\n")
)]
#[case("pve-qm-watchdog", "i6300esb,action=reset", None)]
#[case(
    "pve-qm-watchdog",
    "model=x",
    Some(
        "format error\nmodel: value 'x' does not have a value in the enumeration 'i6300esb, ib700'\n"
    )
)]
#[case("pve-qm-rng", "/dev/urandom,max_bytes=1024", None)]
#[case(
    "pve-qm-rng",
    "max_bytes=1024",
    Some("format error\nsource: property is missing and it is not optional\n")
)]
#[case(
    "pve-qm-smbios1",
    "uuid=5b0f8e1c-0a7e-4b8f-9a47-1f0e1c2d3e4f,base64=1",
    None
)]
#[case(
    "pve-qm-smbios1",
    "uuid=nope",
    Some("format error\nuuid: value does not match the regex pattern\n")
)]
#[case("pve-qm-cicustom", "user=local:snippets/u.yaml", None)]
#[case(
    "pve-qm-cicustom",
    "user=u.yaml",
    Some("format error\nuser: invalid format - unable to parse volume ID 'u.yaml'\n\n")
)]
#[case("pve-qm-hostpci", "0000:01:00.0,pcie=1", None)]
#[case(
    "pve-qm-hostpci",
    "01:00.0,vendor-id=8086",
    Some("format error\nvendor-id: value does not match the regex pattern\n")
)]
#[case("pve-qm-ipconfig", "ip=10.0.0.5/24,gw=10.0.0.1", None)]
#[case(
    "pve-qm-ipconfig",
    "gw=10.0.0.1",
    Some("format error\nip: missing property required by 'gw'\n")
)]
#[case("pve-qemu-sev-fmt", "snp,allow-smt=0", None)]
#[case(
    "pve-qemu-sev-fmt",
    "type=tdx",
    Some(
        "format error\ntype: value 'tdx' does not have a value in the enumeration 'std, es, snp'\n"
    )
)]
#[case("pve-qemu-tdx-fmt", "tdx,attestation=1", None)]
#[case(
    "pve-qemu-tdx-fmt",
    "tdx",
    Some("format error\nattestation: property is missing and it is not optional\n")
)]
#[case("pve-vm-cpu-conf", "host,flags=+aes;-pcid", None)]
#[case(
    "pve-vm-cpu-conf",
    "host,flags=+avx2",
    Some(
        "VM-specific CPU flags must be a subset of: nested-virt, md-clear, pcid, spec-ctrl, ssbd, ibpb, virt-ssbd, amd-ssbd, amd-no-ssb, pdpe1gb, hv-tlbflush, hv-evmcs, aes\n"
    )
)]
#[case("pve-vm-cpu-conf", "flags=+aes", Some("CPU is missing cputype\n"))]
#[case(
    "pve-vm-cpu-conf",
    "skylake",
    Some("Built-in cputype 'skylake' is not defined (missing 'custom-' prefix?)\n")
)]
#[case(
    "pve-vm-cpu-conf",
    "host,reported-model=EPYC",
    Some("Property 'reported-model' not allowed in VM-specific CPU config.\n")
)]
#[case("backup-fleecing", "1,storage=local-lvm", None)]
#[case(
    "backup-fleecing",
    "enabled=1",
    Some("'storage' parameter is required when 'enabled' is set\n")
)]
#[case("backup-performance", "max-workers=8", None)]
#[case(
    "backup-performance",
    "max-workers=0",
    Some("format error\nmax-workers: value must have a minimum value of 1\n")
)]
#[case("prune-backups", "keep-last=3,keep-daily=7", None)]
#[case("prune-backups", "keep-all=1,keep-last=0", None)]
#[case(
    "prune-backups",
    "keep-all=1,keep-last=2",
    Some("keep-all cannot be set together with other options.\n")
)]
#[case("proxmox-remote", "host=pve2,apitoken=PVEAPIToken=root@pam!t=s", None)]
#[case(
    "proxmox-remote",
    "host=pve2",
    Some("format error\napitoken: property is missing and it is not optional\n")
)]
#[case("pve-tfa-config", "type=oath,digits=8", None)]
#[case(
    "pve-tfa-config",
    "type=oath,digits=9",
    Some("format error\ndigits: value must have a maximum value of 8\n")
)]
#[case("realm-sync-options", "scope=users,remove-vanished=acl;entry", None)]
#[case(
    "realm-sync-options",
    "remove-vanished=all",
    Some("format error\nremove-vanished: value does not match the regex pattern\n")
)]
#[case(
    "pve-sdn-dhcp-range",
    "start-address=10.0.0.10,end-address=10.0.0.20",
    None
)]
#[case(
    "pve-sdn-dhcp-range",
    "start-address=10.0.0.10",
    Some("format error\nend-address: property is missing and it is not optional\n")
)]
#[case("some-unknown-format", "anything", None)]
fn named_formats(#[case] format: &str, #[case] value: &str, #[case] err: Option<&str>) {
    assert_eq!(
        check(format, value).err().map(|e| e.to_string()).as_deref(),
        err,
        "{format} {value}"
    );
}

#[test]
fn lists_split_as_pve() {
    assert_eq!(split_list(" a, b;c  d "), ["a", "b", "c", "d"]);
    assert_eq!(split_list("a b\0c"), ["a b", "c"]);
    assert!(split_list("").is_empty());
}
