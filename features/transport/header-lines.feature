@transport
Feature: How many header lines pveproxy reads
  pveproxy reads at most 64 lines after a request's first line, the
  blank line that ends the headers counted. It does not answer a request
  with more: it stops reading and closes the connection, and the client
  is left without an answer.

  Scenario: A request with a few dozen headers of no meaning is answered
    When I call GET "/version" with 40 more headers
    Then the call succeeds

  Scenario: A request with more than 64 header lines is not answered
    When I call GET "/version" with 70 more headers
    Then the connection is closed without an answer
