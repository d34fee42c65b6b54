# sparrowfleet image: one static binary on an empty base, no shell, no
# package manager. Build the binary on the host first (`make docker` does
# both): CGO_ENABLED=0 go build -trimpath -o bin/sparrow ./cmd/sparrow
#
#   docker run --rm sparrowfleet:dev scheduler --gossip 10.0.0.1:7946 ...
#
# Every daemon takes its addresses as flags; memberlist needs an IP (not a
# host name) in --gossip, see deploy/docker-compose.e2e.yml.
FROM scratch
COPY bin/sparrow /sparrow
# nobody: the daemons need no privileges (all default ports are > 1024).
USER 65534:65534
# The original Sparrow ports: scheduler 20503/20507, node monitor
# 20501/20502, executor 20101, frontend 50201; gossip 7946 (TCP and UDP).
EXPOSE 20501 20502 20503 20507 20101 50201 7946 7946/udp
ENTRYPOINT ["/sparrow"]
CMD ["--help"]
