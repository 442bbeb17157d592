'use strict';
// arg2 as YARPC writes it: a JSON object for the json arg scheme, else the binary map nh:2 (k~2 v~2){nh}.

function encode(headers, as) {
    headers = headers || {};
    if (as === 'json') {
        return Buffer.from(JSON.stringify(headers), 'utf8');
    }
    var keys = Object.keys(headers);
    var parts = [];
    var count = Buffer.alloc(2);
    count.writeUInt16BE(keys.length, 0);
    parts.push(count);
    keys.forEach(function each(k) {
        [k, String(headers[k])].forEach(function one(s) {
            var b = Buffer.from(s, 'utf8');
            var len = Buffer.alloc(2);
            len.writeUInt16BE(b.length, 0);
            parts.push(len, b);
        });
    });
    return Buffer.concat(parts);
}

function decode(buf, as) {
    if (!buf || buf.length === 0) {
        return {};
    }
    if (as === 'json') {
        return JSON.parse(buf.toString('utf8')) || {};
    }
    var out = {};
    var n = buf.readUInt16BE(0);
    var pos = 2;
    for (var i = 0; i < n; i++) {
        var kl = buf.readUInt16BE(pos);
        var k = buf.toString('utf8', pos + 2, pos + 2 + kl);
        pos += 2 + kl;
        var vl = buf.readUInt16BE(pos);
        out[k] = buf.toString('utf8', pos + 2, pos + 2 + vl);
        pos += 2 + vl;
    }
    return out;
}

module.exports = {encode: encode, decode: decode};
