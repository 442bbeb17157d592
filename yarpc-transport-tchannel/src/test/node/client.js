'use strict';
// A tchannel-node 4.0.1 client for the interop tests. Usage: node client.js HOST:PORT
// Prints "READY" at once, then reads one JSON request per line on stdin and answers each with one JSON
// line on stdout, in completion order:
//   in:  {"id": 1, "service": "s", "endpoint": "echo", "as": "raw", "headers": {...}, "body": "text"
//         | "bodyBase64": "...", "bodyRepeat": {"size": N}, "timeout": 5000, "checksumType": 0|1|3}
//   out: {"id": 1, "ok": true|false, "headers": {...}, "arg2Base64": "...", "arg3Base64": "...",
//         "resHeaders": {...}} or {"id": 1, "error": {"type", "name", "codeName", "message", "isErrorFrame"}}
// "headers" are encoded into arg2 as YARPC does: a JSON object for "as": "json", else the binary map;
// "arg2Base64" instead sends raw arg2 bytes.
var readline = require('readline');
var TChannel = require('tchannel');
var Checksum = require('tchannel/v2/checksum');
var headers = require('./headers');

var hostPort = process.argv[2];
var client = new TChannel();
var subChannels = {};

function subChannel(service) {
    if (!subChannels[service]) {
        subChannels[service] = client.makeSubChannel({serviceName: service, peers: [hostPort]});
    }
    return subChannels[service];
}

function body(cmd) {
    if (cmd.bodyRepeat) {
        var b = Buffer.alloc(cmd.bodyRepeat.size);
        for (var i = 0; i < b.length; i++) {
            b[i] = (i * 13) & 0xff;
        }
        return b;
    }
    if (cmd.bodyBase64 !== undefined) {
        return Buffer.from(cmd.bodyBase64, 'base64');
    }
    return Buffer.from(cmd.body || '', 'utf8');
}

function answer(obj) {
    process.stdout.write(JSON.stringify(obj) + '\n');
}

function send(cmd) {
    var scheme = cmd.as || 'raw';
    var arg2 = cmd.arg2Base64 !== undefined ? Buffer.from(cmd.arg2Base64, 'base64')
        : headers.encode(cmd.headers || {}, scheme);
    var options = {
        serviceName: cmd.service,
        timeout: cmd.timeout || 5000,
        hasNoParent: true,
        retryLimit: 1,
        retryFlags: {never: true, onConnectionError: false, onTimeout: false},
        headers: {as: scheme, cn: cmd.caller || 'node-client'}
    };
    var type = cmd.checksumType === undefined ? 3 : cmd.checksumType;
    options.checksumType = type;
    options.checksum = new Checksum(type);
    subChannel(cmd.service).request(options).send(cmd.endpoint, arg2, body(cmd), function done(err, res, a2, a3) {
        if (err) {
            answer({id: cmd.id, error: {
                type: err.type, name: err.name, codeName: err.codeName || null,
                message: err.message, isErrorFrame: !!err.isErrorFrame
            }});
            return;
        }
        var decoded = null;
        try {
            decoded = headers.decode(a2, scheme);
        } catch (e) {
            decoded = {'!decode-error': String(e)};
        }
        answer({
            id: cmd.id,
            ok: res.ok,
            headers: decoded,
            resHeaders: res.headers,
            checksumType: res.checksum ? res.checksum.type : -1,
            arg2Base64: Buffer.from(a2 || '').toString('base64'),
            arg3Base64: Buffer.from(a3 || '').toString('base64')
        });
    });
}

var lines = readline.createInterface({input: process.stdin});
lines.on('line', function onLine(line) {
    if (line.trim() === '') {
        return;
    }
    var cmd;
    try {
        cmd = JSON.parse(line);
    } catch (e) {
        answer({id: -1, error: {message: 'bad command: ' + e.message}});
        return;
    }
    send(cmd);
});
lines.on('close', function onClose() {
    client.close();
    process.exit(0);
});
process.stdout.write('READY\n');
