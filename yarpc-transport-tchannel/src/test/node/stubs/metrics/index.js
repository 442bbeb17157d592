// Empty stand-in for the unpublished `metrics` package (see package.json).
module.exports = {};
