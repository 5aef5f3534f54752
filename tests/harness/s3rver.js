// Starts s3rver (an S3-protocol server that checks SigV4 signatures) for the
// remote tier's tests and benchmarks, in the foreground until SIGTERM:
//   node s3rver.js PACKAGE_DIR PORT DATA_DIR BUCKET REQUEST_LOG [lenient]
// It listens on 127.0.0.1:PORT, keeps objects under DATA_DIR, makes BUCKET,
// answers virtual-hosted requests for BUCKET.s3.localhost, and appends
// "METHOD PATH STATUS MICROSECONDS" per request to REQUEST_LOG (the
// server's own time: from the request's arrival in its middleware chain to
// the response's last byte handed to the socket). Its one account is
// S3RVER with the secret S3RVER. "lenient" takes any well-formed signature
// (s3rver signs a virtual-hosted request's path with the bucket in front,
// as SigV2 did, which SigV4 clients do not).
'use strict';

const fs = require('fs');
const [pkg, port, dir, bucket, log, mode] = process.argv.slice(2);
const S3rver = require(pkg);

const server = new S3rver({
  address: '127.0.0.1',
  port: Number(port),
  directory: dir,
  silent: true,
  serviceEndpoint: 'localhost',
  allowMismatchedSignatures: mode === 'lenient',
  configureBuckets: [{ name: bucket }],
});
// First in the chain (Koa composes the chain when the server starts); the
// line is written when the response has gone, with its final status.
server.middleware.unshift((ctx, next) => {
  const line = `${ctx.method} ${ctx.path}`;
  const start = process.hrtime.bigint();
  ctx.res.on('finish', () => {
    const us = (process.hrtime.bigint() - start) / 1000n;
    fs.appendFileSync(log, `${line} ${ctx.res.statusCode} ${us}\n`);
  });
  return next();
});
server.run().catch((e) => {
  console.error(e);
  process.exit(1);
});
process.on('SIGTERM', () => process.exit(0));
