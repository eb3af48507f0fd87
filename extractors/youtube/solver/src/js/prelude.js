// Evaluated before every lifted program. QuickJS turns an array into a slow,
// hash-keyed one when an element is deleted, and its native splice deletes
// the elements it drops from the end; after the first such splice every
// unshift in an n function walks a hash table (several times slower). This
// splice does the same with slice, copyWithin (which moves holes exactly as
// splice does), push and a shorter length, all of which keep an array fast;
// anything but an array goes to the native one.
(function () {
  var native = Array.prototype.splice;
  function splice(start, deleteCount) {
    var o = this, len = o.length, argc = arguments.length;
    if (!Array.isArray(o) || argc === 0) return native.apply(o, arguments);
    var s = Math.trunc(+start) || 0;
    s = s < 0 ? Math.max(len + s, 0) : Math.min(s, len);
    var dc = argc === 1 ? len - s : Math.min(Math.max(Math.trunc(+deleteCount) || 0, 0), len - s);
    var items = argc > 2 ? argc - 2 : 0;
    var removed = o.slice(s, s + dc);
    if (items > dc) {
      for (var k = dc; k < items; k++) o.push(undefined);
      o.copyWithin(s + items, s + dc, len);
    } else if (items < dc) {
      o.copyWithin(s + items, s + dc, len);
      o.length = len - dc + items;
    }
    for (var j = 0; j < items; j++) o[s + j] = arguments[j + 2];
    return removed;
  }
  Object.defineProperty(Array.prototype, "splice", {
    value: splice, writable: true, configurable: true, enumerable: false,
  });
})();
