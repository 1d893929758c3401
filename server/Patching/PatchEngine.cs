using System.Buffers;
using System.Collections.Concurrent;
using System.Text.Json;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing.JavaScript;
using Jackdaw.Storage.Blittable;
using Jint;
using Jint.Native;
using Jint.Native.Json;
using Jint.Native.Object;
using Jint.Runtime;
using Jint.Runtime.Interop;
using JintScriptException = Jint.Runtime.JavaScriptException;

namespace Jackdaw.Server.Patching;

/// <summary>
/// A Jint engine in the sandbox of the index maps (<see cref="MapSandbox"/>, the same
/// <see cref="JavaScriptLimits"/> per document) with RavenDB's patch functions: <c>load(id)</c>,
/// <c>put(id, doc[, changeVector])</c>, <c>del(id[, changeVector])</c>, <c>id(doc)</c>,
/// <c>getMetadata(doc)</c>, <c>output(...)</c> and <c>console.log(...)</c>. Each reads and writes
/// through the transaction of the current run, so a script's writes commit or roll back with the
/// document's.
/// </summary>
/// <remarks>
/// Making an engine costs far more than patching a document, so engines are pooled and reused,
/// and each keeps the functions it made from the scripts it ran (a by-query operation runs one
/// script over every document). One thread at a time: a run is <see cref="Begin"/>, any number of
/// <see cref="Run"/>, <see cref="End"/>, on the thread that holds the transaction.
/// </remarks>
internal sealed partial class PatchEngine
{
    [System.Text.RegularExpressions.GeneratedRegex(@"patch:(\d+):(\d+)")]
    private static partial System.Text.RegularExpressions.Regex StackLocation();

    private const int PooledEngines = 8;
    private const int CachedScripts = 32;
    private static readonly ConcurrentBag<PatchEngine> Pool = [];

    private readonly Engine _engine;
    private readonly Dictionary<PatchScript, JsValue> _functions = new(ReferenceEqualityComparer.Instance);
    private readonly JsonParser _parser;
    private readonly ArrayBufferWriter<byte> _buffer = new(4096);
    private readonly Utf8JsonWriter _writer;
    private DocumentsTransaction? _transaction;
    private JsonOperationContext? _context;
    private PatchDebug? _debug;

    private PatchEngine()
    {
        _engine = MapSandbox.CreateEngine(Limits);
        _parser = new JsonParser(_engine);
        _writer = new Utf8JsonWriter(_buffer, new JsonWriterOptions { SkipValidation = true, Encoder = System.Text.Encodings.Web.JavaScriptEncoder.UnsafeRelaxedJsonEscaping });
        _engine.SetValue("load", new ClrFunction(_engine, "load", Load, 1));
        _engine.SetValue("put", new ClrFunction(_engine, "put", Put, 2));
        _engine.SetValue("del", new ClrFunction(_engine, "del", Delete, 1));
        _engine.SetValue("id", new ClrFunction(_engine, "id", Id, 1));
        _engine.SetValue("getMetadata", new ClrFunction(_engine, "getMetadata", GetMetadata, 1));
        _engine.SetValue("output", new ClrFunction(_engine, "output", Output, 1));
        var console = new JsObject(_engine);
        console.FastSetDataProperty("log", new ClrFunction(_engine, "log", Output, 1));
        _engine.SetValue("console", console);
    }

    /// <summary>What a patch may spend on one document: the index maps' limits.</summary>
    public static JavaScriptLimits Limits { get; } = JavaScriptLimits.Default;

    public Engine Engine => _engine;

    public static PatchEngine Rent() => Pool.TryTake(out var engine) ? engine : new PatchEngine();

    public static void Return(PatchEngine engine)
    {
        engine.End();
        if (Pool.Count < PooledEngines)
        {
            Pool.Add(engine);
        }
    }

    /// <summary>Starts a run in <paramref name="transaction"/>; <paramref name="debug"/> collects output and actions (null: they are dropped).</summary>
    public void Begin(DocumentsTransaction transaction, JsonOperationContext context, PatchDebug? debug)
    {
        _transaction = transaction;
        _context = context;
        _debug = debug;
    }

    public void End()
    {
        _transaction = null;
        _context = null;
        _debug = null;
    }

    /// <summary>The stored document as a JavaScript object.</summary>
    public ObjectInstance FromDocument(ReadOnlySpan<byte> blittable) => PatchJson.FromBlittable(_engine, blittable);

    /// <summary>A JSON object (a <c>CreateIfMissing</c> document) as a JavaScript object.</summary>
    public ObjectInstance FromJson(string json) => (ObjectInstance)_parser.Parse(json);

    /// <summary>
    /// Runs <paramref name="script"/> with <c>this</c> = <paramref name="document"/>, within the
    /// limits (counted again from zero for each document).
    /// </summary>
    /// <exception cref="Errors.PatchScriptException">The script threw or ran past a limit; the message names <paramref name="id"/> and the line.</exception>
    public void Run(PatchScript script, string id, JsValue document)
    {
        var function = FunctionOf(script);
        var args = _parser.Parse(script.ValuesJson);
        var arguments = new JsValue[1 + script.Parameters.Length + (script.HasAlias ? 1 : 0)];
        arguments[0] = args;
        for (var i = 0; i < script.Parameters.Length; i++)
        {
            arguments[i + 1] = ((ObjectInstance)args).Get(script.Parameters[i]);
        }
        if (script.HasAlias)
        {
            arguments[^1] = document;
        }

        _engine.Constraints.Reset();
        try
        {
            _engine.Call(function, document, arguments);
        }
        catch (Exception e) when (JavaScriptMapper.Describe(e, Limits, "the patch") is { } problem)
        {
            // A limit can stop the script anywhere in its calls; the next document starts at the bottom.
            _engine.Advanced.ResetCallStack();
            var (_, line, column) = JavaScriptMapper.LocationOf(e);
            if (line is null && StackLocation().Match(_engine.Advanced.StackTrace) is { Success: true } top)
            {
                // A limit carries no location: the innermost frame of the script's stack says where it was.
                (line, column) = (int.Parse(top.Groups[1].ValueSpan, System.Globalization.CultureInfo.InvariantCulture), int.Parse(top.Groups[2].ValueSpan, System.Globalization.CultureInfo.InvariantCulture) + 1);
            }
            var where = line is null ? string.Empty : $" (line {PatchScript.ScriptLine(line.Value)}, column {column})";
            throw new Errors.PatchScriptException($"Patch of '{id}' failed: {problem}{where}.", e);
        }
    }

    /// <summary>The document object as disk-mode blittable, in <see cref="_context"/>.</summary>
    public BlittableDocument ToBlittable(JsValue document, string id)
    {
        _buffer.ResetWrittenCount();
        _writer.Reset(_buffer);
        PatchJson.Write(_writer, document, id);
        _writer.Flush();
        return _context!.Parse(_buffer.WrittenSpan, BlittableMode.Disk);
    }

    private JsValue FunctionOf(PatchScript script)
    {
        if (_functions.TryGetValue(script, out var function))
        {
            return function;
        }
        if (_functions.Count >= CachedScripts)
        {
            _functions.Clear();
        }
        _engine.Constraints.Reset();
        function = _engine.Evaluate(script.Prepared);
        _functions[script] = function;
        return function;
    }

    private DocumentsTransaction Transaction => _transaction ?? throw new JintScriptException(_engine.Intrinsics.TypeError, "load, put and del can only be called while a document is patched.");

    private JsValue Load(JsValue thisObject, JsValue[] arguments)
    {
        var id = IdArgument(arguments, "load(id)");
        if (id is null)
        {
            return JsValue.Null;
        }
        _debug?.Loaded.Add(id);
        return Transaction.TryGet(id, out var record) ? FromDocument(record.Document) : JsValue.Null;
    }

    private JsValue Put(JsValue thisObject, JsValue[] arguments)
    {
        var id = IdArgument(arguments, "put(id, doc)") ?? throw new JintScriptException(_engine.Intrinsics.TypeError, "put(id, doc) needs an id (end it with '/' for a server-made one).");
        var document = arguments.Length > 1 ? arguments[1] : JsValue.Undefined;
        if (document is not ObjectInstance || document.IsArray())
        {
            throw new JintScriptException(_engine.Intrinsics.TypeError, $"put('{id}', doc) takes a document object, not {MapScope.Describe(document)}.");
        }
        var changeVector = arguments.Length > 2 && arguments[2].IsString() ? arguments[2].AsString() : null;
        var blittable = ToBlittable(document, id);
        var put = Transaction.Put(id, blittable.Span, PatchJson.CollectionOf(document), changeVector, _context!);
        _debug?.Put.Add(put.Id);
        return new JsString(put.Id);
    }

    private JsValue Delete(JsValue thisObject, JsValue[] arguments)
    {
        var id = IdArgument(arguments, "del(id)") ?? throw new JintScriptException(_engine.Intrinsics.TypeError, "del(id) needs an id.");
        var changeVector = arguments.Length > 1 && arguments[1].IsString() ? arguments[1].AsString() : null;
        _debug?.Deleted.Add(id);
        return Transaction.Delete(id, changeVector) ? JsBoolean.True : JsBoolean.False;
    }

    private JsValue Id(JsValue thisObject, JsValue[] arguments)
    {
        var document = arguments.Length > 0 ? arguments[0] : JsValue.Undefined;
        if (document is not ObjectInstance)
        {
            throw new JintScriptException(_engine.Intrinsics.TypeError, $"id(doc) takes a document, not {MapScope.Describe(document)}.");
        }
        return PatchJson.IdOf(document) is { } id ? new JsString(id) : JsValue.Null;
    }

    private JsValue GetMetadata(JsValue thisObject, JsValue[] arguments)
    {
        var document = arguments.Length > 0 ? arguments[0] : JsValue.Undefined;
        if (document is not ObjectInstance obj)
        {
            throw new JintScriptException(_engine.Intrinsics.TypeError, $"getMetadata(doc) takes a document, not {MapScope.Describe(document)}.");
        }
        return obj.Get("@metadata");
    }

    private JsValue Output(JsValue thisObject, JsValue[] arguments)
    {
        if (_debug is { } debug)
        {
            debug.Info.Add(string.Join(" ", arguments.Select(a => a.IsString() ? a.AsString() : Stringify(a))));
        }
        return JsValue.Undefined;
    }

    private string Stringify(JsValue value)
    {
        if (value is not ObjectInstance || value.IsCallable())
        {
            return TypeConverter.ToString(value);
        }
        _buffer.ResetWrittenCount();
        _writer.Reset(_buffer);
        PatchJson.Write(_writer, value, "output");
        _writer.Flush();
        return System.Text.Encoding.UTF8.GetString(_buffer.WrittenSpan);
    }

    private string? IdArgument(JsValue[] arguments, string call)
    {
        var value = arguments.Length > 0 ? arguments[0] : JsValue.Undefined;
        if (value.IsNull() || value.IsUndefined())
        {
            return null;
        }
        if (!value.IsString())
        {
            throw new JintScriptException(_engine.Intrinsics.TypeError, $"{call} takes a document id (a string), not {MapScope.Describe(value)}.");
        }
        return value.AsString();
    }
}
