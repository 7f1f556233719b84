# syntax=docker/dockerfile:1
#
# The lancens image for people with a container daemon:
#
#   docker build --build-arg VERSION=$(git describe --tags --always) \
#     --build-arg REVISION=$(git rev-parse HEAD) -t lancens .
#
# `make image` builds the same image without a daemon (cmd/lancens-image);
# a test (cmd/lancens-image) holds the two to the same user, volume, port,
# environment, entrypoint, labels and files. See "The container image" in
# the README for running it.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG REVISION=unknown
RUN make build VERSION="$VERSION" REVISION="$REVISION" && mkdir /empty

FROM scratch
ARG VERSION=dev
ARG REVISION=unknown
ARG CREATED=1970-01-01T00:00:00Z
COPY deploy/image/passwd deploy/image/group deploy/image/nsswitch.conf /etc/
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build --chmod=1777 /empty/ /tmp/
COPY --from=build --chown=65532:65532 /empty/ /data/
COPY LICENSE NOTICE /usr/share/doc/lancens/
COPY --from=build /src/bin/lancens /usr/local/bin/lancens
ENV PATH=/usr/local/bin \
    LANCENS_ADDR=:2333 \
    LANCENS_DB=/data/lancens.db \
    LANCENS_WAREHOUSE=/data/warehouse
USER 65532:65532
WORKDIR /data
VOLUME /data
EXPOSE 2333/tcp
STOPSIGNAL SIGTERM
LABEL org.opencontainers.image.title="lancens" \
      org.opencontainers.image.description="Lance Namespace REST server: catalog, commit coordinator and LanceDB remote database" \
      org.opencontainers.image.version="$VERSION" \
      org.opencontainers.image.revision="$REVISION" \
      org.opencontainers.image.source="https://github.com/lancens/lancens" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.created="$CREATED"
ENTRYPOINT ["lancens", "serve"]
