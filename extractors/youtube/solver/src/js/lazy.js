// Installed when a program carries lazy definitions: definitions the sampled
// challenges never touched stay as text on the Rust side (`__lazy_has`,
// `__lazy_src`) and are compiled on first use. A proxy at the end of the
// global object's (and the closure parameter's) prototype chain answers for
// their names, so a path the samples missed still finds every definition.
var __lazy_seen = [];
var __lazy = function (o, prefix) {
  var pending = {};
  var t = Object.create(Object.getPrototypeOf(o));
  Object.setPrototypeOf(o, new Proxy(t, {
    has: function (t, k) {
      return (typeof k === "string" && __lazy_has(prefix + k)) || k in t;
    },
    get: function (t, k, r) {
      if (typeof k !== "string" || !__lazy_has(prefix + k) || pending[k]) {
        return Reflect.get(t, k, r);
      }
      pending[k] = true;
      var v = (0, eval)("(" + __lazy_src(prefix + k) + ")");
      delete pending[k];
      Object.defineProperty(o, k, { value: v, writable: true, configurable: true, enumerable: true });
      __lazy_seen.push(prefix + k);
      return v;
    },
  }));
};
