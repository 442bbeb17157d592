'use strict';
// A tchannel-node 4.0.1 server for the interop tests. Usage: node server.js SERVICE
// Prints "READY host:port" once listening on 127.0.0.1 (a free port), then serves until killed.
//
// Endpoints (arg2 and arg3 are opaque bytes to tchannel; YARPC puts headers in arg2):
//   echo          call res OK with the request's arg2 and arg3
//   fail          call res with code 0x01 (sendNotOk), arg2 and arg3 echoed: an application error
//                 without YARPC's $rpc$ keys
//   yarpc-fail    call res 0x01 whose arg2 holds $rpc$-error-code / -name / -message (from arg3: "code:message")
//   system-error  an error frame; arg3 is the code name (Timeout, Busy, Declined, UnexpectedError, ...)
//   big           call res OK with arg3 = N bytes (N in arg3, decimal) of the pattern (i * 7) & 0xff
//   info          call res OK, arg3 = JSON {service, headers, checksumType, ttl, arg2Length, arg3Length}
var TChannel = require('tchannel');
var headers = require('./headers');

var serviceName = process.argv[2] || 'node-svc';
var server = new TChannel();
var chan = server.makeSubChannel({serviceName: serviceName});

function as(req) {
    return req.headers.as || 'raw';
}

chan.register('echo', function echo(req, res, arg2, arg3) {
    res.headers.as = as(req);
    res.sendOk(arg2, arg3);
});

chan.register('fail', function fail(req, res, arg2, arg3) {
    res.headers.as = as(req);
    res.sendNotOk(arg2, arg3);
});

chan.register('yarpc-fail', function yarpcFail(req, res, arg2, arg3) {
    var text = String(arg3);
    var colon = text.indexOf(':');
    res.headers.as = as(req);
    res.sendNotOk(headers.encode({
        '$rpc$-error-code': text.slice(0, colon),
        '$rpc$-error-name': 'NodeError',
        '$rpc$-error-message': text.slice(colon + 1),
        'from-node': 'yes'
    }, as(req)), Buffer.from('error body'));
});

chan.register('system-error', function systemError(req, res, arg2, arg3) {
    res.sendError(String(arg3), 'deliberate ' + String(arg3) + ' from node');
});

chan.register('big', function big(req, res, arg2, arg3) {
    var n = parseInt(String(arg3), 10);
    var body = Buffer.alloc(n);
    for (var i = 0; i < n; i++) {
        body[i] = (i * 7) & 0xff;
    }
    res.headers.as = as(req);
    res.sendOk(arg2, body);
});

chan.register('info', function info(req, res, arg2, arg3) {
    res.headers.as = as(req);
    res.sendOk(arg2, Buffer.from(JSON.stringify({
        service: req.serviceName,
        headers: req.headers,
        checksumType: req.checksum ? req.checksum.type : -1,
        ttl: req.timeout,
        arg2Length: arg2.length,
        arg3Length: arg3.length
    })));
});

server.listen(0, '127.0.0.1', function onListening() {
    process.stdout.write('READY ' + server.hostPort + '\n');
});

process.stdin.on('end', function onEnd() {
    // the test closed our stdin: it is done with us
    server.close();
    process.exit(0);
});
process.stdin.resume();
