@console
Feature: Console proxies
  A console call starts a proxy task on the node that answers it and
  gives a port of 5900-5999 and a PVEVNC ticket good for 40 seconds, for
  that user, the guest's or node's ACL path and, on 9.x, that port alone. The
  websocket call and POST /access/vncticket (which a proxy asks before
  it lets a client in) check it. A proxy nobody connects to gives up
  after 10 seconds, as the program behind it does.

  Scenario: A VM's VNC console and its ticket
    Given VM "{vm1}" was created
    When I call POST "/nodes/{node}/qemu/{vm1}/vncproxy"
      | websocket | 1 |
    Then the answer has "port" matching "59[0-9][0-9]"
    And the answer has "password" matching "[!-`]{8}"
    And the answer has "ticket" matching ".{8}:PVEVNC:[0-9A-F]{8}::.+"
    And the answer has "cert" matching "(?s)-----BEGIN CERTIFICATE-----.*"
    And the answer has "user" = "{me}"
    When I remember the answer's "ticket" as "ticket"
    And I remember the answer's "port" as "port"
    And I call GET "/nodes/{node}/qemu/{vm1}/vncwebsocket"
      | port      | {var:port}   |
      | vncticket | {var:ticket} |
    Then the answer has "port" = "{var:port}"

  @pve9
  Scenario: On 9.x a ticket holds for its port alone
    Given VM "{vm1}" was created
    When I call POST "/nodes/{node}/qemu/{vm1}/vncproxy"
      | websocket | 1 |
    And I remember the answer's "ticket" as "ticket"
    And I call GET "/nodes/{node}/qemu/{vm1}/vncwebsocket"
      | port      | 5999         |
      | vncticket | {var:ticket} |
    Then PVE answers 401 "permission denied - invalid PVEVNC ticket"

  @pve8.4
  Scenario: On 8.4 a ticket names no port
    Given VM "{vm1}" was created
    When I call POST "/nodes/{node}/qemu/{vm1}/vncproxy"
      | websocket | 1 |
    And I remember the answer's "ticket" as "ticket"
    And I call GET "/nodes/{node}/qemu/{vm1}/vncwebsocket"
      | port      | 5999         |
      | vncticket | {var:ticket} |
    Then the answer has "port" = "5999"

  @pve9
  Scenario: A proxy asks /access/vncticket whether a ticket holds
    Given VM "{vm1}" was created
    When I call POST "/nodes/{node}/qemu/{vm1}/vncproxy"
      | websocket | 1 |
    And I remember the answer's "ticket" as "ticket"
    And I remember the answer's "port" as "port"
    And I call POST "/access/vncticket" without credentials
      | authid    | {me}         |
      | vncticket | {var:ticket} |
      | path      | /vms/{vm1}   |
      | privs     | VM.Console   |
      | port      | {var:port}   |
    Then the answer is null
    When I call POST "/access/vncticket" without credentials
      | authid    | {me}         |
      | vncticket | {var:ticket} |
      | path      | /vms/{vm2}   |
      | privs     | VM.Console   |
      | port      | {var:port}   |
    Then PVE answers 401 "authentication failure"

  Scenario: A container's terminal gives no password and no CA
    Given the OS template is available
    And container "{vm1}" was created
    When I call POST "/nodes/{node}/lxc/{vm1}/termproxy"
    Then the answer has "ticket" matching "PVEVNC:[0-9A-F]{8}::.+"
    And the answer has no "password"
    And the answer has no "cert"
    And the answer has "upid" matching "UPID:.*:vncproxy:{vm1}:.*"

  Scenario: A node's shell through termproxy
    When I call POST "/nodes/{node}/termproxy"
    Then the answer has "upid" matching "UPID:.*:vncshell::.*"
    When I remember the answer's "ticket" as "ticket"
    And I remember the answer's "port" as "port"
    And I call GET "/nodes/{node}/vncwebsocket"
      | port      | {var:port}   |
      | vncticket | {var:ticket} |
    Then the answer has "port" = "{var:port}"

  @fake-only
  Scenario: A proxy nobody connects to gives up after 10 seconds
    Given VM "{vm1}" was created
    When I call POST "/nodes/{node}/qemu/{vm1}/vncproxy"
    And I remember the answer's task
    And 11 seconds pass
    Then the task ends with "connection timed out"
    When I call POST "/nodes/{node}/lxc/{vm2}/termproxy"
    Then PVE answers 500 "Configuration file 'nodes/{node}/lxc/{vm2}.conf' does not exist"

  Scenario: A SPICE console needs a running VM with a SPICE display
    Given VM "{vm1}" was created
    When I call POST "/nodes/{node}/qemu/{vm1}/spiceproxy"
    Then PVE answers 500 "VM {vm1} not running"
