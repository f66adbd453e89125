# One image with both binaries: pve-operator (the controller) and fake-pve
# (a PVE backend for development clusters).
#
#   docker build -t pve-operator:dev .
#   kind load docker-image pve-operator:dev        # or: k3s ctr images import
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked -p pve-operator -p fake-pve \
 && install -D target/release/pve-operator /out/pve-operator \
 && install -D target/release/fake-pve /out/fake-pve

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/pve-operator /out/fake-pve /usr/local/bin/
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/pve-operator"]
CMD ["run", "--kubernetes"]
