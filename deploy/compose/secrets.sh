#!/bin/sh
# Makes ./secrets/ for compose.yaml: random credentials, each in the file
# the service that needs it reads. Existing files are kept (run it again
# safely); remove ./secrets to start over, with fresh volumes.
#
# The directory is private to its owner (0700); the files in it are
# readable by all (0644) because compose mounts them into containers whose
# users are not the owner (lancens runs as 65532) and cannot change their
# mode without a swarm. Nobody else on this machine can reach them through
# the directory.
set -eu
cd "$(dirname "$0")"
umask 022
mkdir -p secrets
chmod 0700 secrets

random() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }

# write FILE: the content on stdin, unless FILE exists.
write() {
	if [ -e "secrets/$1" ]; then
		echo "kept secrets/$1"
		cat >/dev/null
	else
		cat >"secrets/$1"
		echo "wrote secrets/$1"
	fi
}

[ -e secrets/pg_password ] || random | write pg_password
pg=$(cat secrets/pg_password)
# libpq's password file: host:port:database:user:password.
printf 'postgres:5432:lancens:lancens:%s\n' "$pg" | write pgpass

[ -e secrets/s3.env ] || printf 'ROOT_ACCESS_KEY_ID=lancens\nROOT_SECRET_ACCESS_KEY=%s\n' "$(random)" | write s3.env
s3secret=$(sed -n 's/^ROOT_SECRET_ACCESS_KEY=//p' secrets/s3.env)
write s3_options <<OPTIONS
aws_endpoint=http://s3:7070
aws_region=us-east-1
allow_http=true
aws_access_key_id=lancens
aws_secret_access_key=$s3secret
OPTIONS

# One key a line; add more (and restart) to give each client its own.
random | write api_keys
# The first key as a header, for curl -H @secrets/api_key.header.
printf 'x-api-key: %s\n' "$(head -1 secrets/api_keys)" | write api_key.header
