using System.Globalization;
using Jint;
using Jint.Native;
using Jint.Native.Function;
using Jint.Native.Object;
using Jint.Runtime;
using Jint.Runtime.Descriptors;
using Jint.Runtime.Interop;

namespace Jackdaw.Server.Indexing.JavaScript;

/// <summary>
/// Builds the Jint engine a JavaScript index runs in: no CLR access, no <c>require</c>, no timers,
/// no code from strings, the clock's time zone fixed to UTC, and the limits of
/// <see cref="JavaScriptLimits"/>.
/// </summary>
internal static class MapSandbox
{
    /// <summary>
    /// Globals a map over JSON documents has no use for and that would escape the limits or make
    /// the index depend on the garbage collector. Jint does not charge array buffers (and the typed
    /// arrays over them) to the memory limit: <c>new ArrayBuffer(1e9)</c> allocated a gigabyte in one
    /// call. WeakRef and FinalizationRegistry answer differently depending on when the collector ran.
    /// ShadowRealm would give a script a second set of intrinsics.
    /// </summary>
    private static readonly string[] RemovedGlobals =
    [
        "ArrayBuffer", "SharedArrayBuffer", "DataView", "Atomics", "TypedArray",
        "Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array",
        "Float16Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array",
        "WeakRef", "FinalizationRegistry", "ShadowRealm",
    ];

    public static Engine CreateEngine(JavaScriptLimits limits)
    {
        var engine = new Engine(options =>
        {
            options.MaxStatements(limits.MaxStatements);
            options.TimeoutInterval(limits.Timeout);
            options.LimitRecursion(limits.MaxRecursionDepth);
            options.LimitMemory(limits.MaxAllocatedBytes);
            options.Constraints.MaxArraySize = (uint)limits.MaxArrayLength;
            options.Interop.Enabled = false;
            options.Host.StringCompilationAllowed = false;
            // An index must not depend on where the server runs: new Date(2020, 0, 1) and
            // toLocaleString mean the same everywhere.
            options.TimeZone = TimeZoneInfo.Utc;
            options.Culture = CultureInfo.InvariantCulture;
        });

        foreach (var name in RemovedGlobals)
        {
            engine.Global.Delete(name);
        }

        GuardRepeat(engine, limits.MaxAllocatedBytes);
        return engine;
    }

    /// <summary>
    /// <c>'x'.repeat(n)</c> allocates the whole string in one native call, before any limit is
    /// checked (Jint let <c>'x'.repeat(2 ** 28)</c>, 512 MB, through a 16 MB limit). The wrapper refuses a
    /// result larger than the memory limit before it is made.
    /// </summary>
    private static void GuardRepeat(Engine engine, long maxAllocatedBytes)
    {
        var prototype = (ObjectInstance)((ObjectInstance)engine.Global.Get("String")).Get("prototype");
        var repeat = (Function)prototype.Get("repeat");
        var maxChars = maxAllocatedBytes / sizeof(char);
        var guarded = new ClrFunction(engine, "repeat", (thisObject, arguments) =>
        {
            if (thisObject.IsNull() || thisObject.IsUndefined())
            {
                // The original throws the TypeError the specification asks for.
                return repeat.Call(thisObject, arguments);
            }

            // Converted once here and handed on converted, so a toString or valueOf runs once.
            var text = thisObject.IsString() ? thisObject : new JsString(TypeConverter.ToString(thisObject));
            var count = arguments.Length > 0 ? TypeConverter.ToNumber(arguments[0]) : 0;
            if (text.AsString().Length * count > maxChars)
            {
                throw new MemoryLimitExceededException(
                    $"'{Shorten(text.AsString())}'.repeat({count}) would make a string of {text.AsString().Length * count:0} characters; the limit is {maxChars} characters ({maxAllocatedBytes} bytes).");
            }

            return repeat.Call(text, [JsNumber.Create(count)]);
        }, 1);
        prototype.DefineOwnProperty("repeat", new PropertyDescriptor(guarded, PropertyFlag.Writable | PropertyFlag.Configurable));
    }

    private static string Shorten(string text) => text.Length <= 20 ? text : text[..20] + "…";
}
