using System.Text.RegularExpressions;
using Acornima;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Mapping;
using Jint;
using Jint.Native;
using Jint.Native.Error;
using Jint.Native.Object;
using Jint.Runtime;
using Jint.Runtime.Interop;

namespace Jackdaw.Server.Indexing.JavaScript;

/// <summary>
/// The map of a static index whose maps are JavaScript, as RavenDB's JavaScript indexes are:
/// <c>map('Orders', o => ({ Company: o.Company, Total: o.Lines.reduce((s, l) => s + l.Quantity * l.PricePerUnit, 0) }))</c>.
/// Each map string is a script that calls <c>map(collection, fn)</c> once or more and may declare
/// helper functions around it; several strings may map several collections or the same one twice.
/// A map function returns an object (one entry), an array of objects (one entry each) or
/// null/undefined (none). Scripts may call <c>id(doc)</c>, <c>load(id[, collection])</c>,
/// <c>noTracking.load(id[, collection])</c> (a load whose changes do not map the document again),
/// <c>getMetadata(doc)</c>, <c>attachmentsFor(doc)</c>, <c>loadAttachment(doc, name)</c> and
/// <c>loadAttachments(doc)</c> (<see cref="MapAttachments"/>), and the functions of the definition's
/// additional sources, which run first; they run in a sandbox (<see cref="JavaScriptLimits"/>, README.md).
/// </summary>
/// <remarks>
/// One instance owns one Jint engine, made and loaded with the scripts once, and reused for every
/// document: an engine costs far more to build than a map costs to run. That makes an instance
/// single-threaded: the index's one indexing thread calls <see cref="Map"/>, never two threads at
/// once. Globals a script sets survive from one document to the next (as in RavenDB); documents
/// do not (see <see cref="MapScope"/>).
/// </remarks>
public sealed partial class JavaScriptMapper : IIndexMapper, IReduceFunctions, IDisposable
{
    private readonly Engine _engine;
    private readonly MapScope _scope;
    private readonly IndexEntryConverter _converter;
    private readonly Dictionary<string, MapFunction[]> _maps;

    private JavaScriptMapper(string name, JavaScriptLimits limits, Engine engine, MapScope scope, List<MapFunction> functions, bool usesLoad)
    {
        Name = name;
        Limits = limits;
        _engine = engine;
        _scope = scope;
        _converter = new IndexEntryConverter(engine, limits.MaxArrayLength);
        // Grouped in the order the maps were registered: a group's key is the first spelling.
        var byCollection = functions.GroupBy(f => f.Collection, StringComparer.OrdinalIgnoreCase).ToArray();
        _maps = byCollection.ToDictionary(g => g.Key, g => g.ToArray(), StringComparer.OrdinalIgnoreCase);
        Collections = byCollection.Select(g => g.Key).ToArray();
        UsesLoad = usesLoad;
        _scope.LoadsDocuments = usesLoad;
    }

    public string Name { get; }

    public JavaScriptLimits Limits { get; }

    /// <summary>The collections the maps read, as first written, without case-insensitive duplicates.</summary>
    public IReadOnlyList<string> Collections { get; }

    /// <summary>
    /// True when a map or an additional source calls <c>load(</c> or <c>noTracking.load(</c>: the
    /// indexer then gives the maps a loader and tracks the ids in <see cref="MapOutput.LoadedIds"/>.
    /// Read from the text: a call inside a comment or a string counts too (a needless tracking), a
    /// call through an alias (<c>const get = load</c>) does not; <see cref="MapOutput.LoadedIds"/> is
    /// filled either way.
    /// </summary>
    public bool UsesLoad { get; }

    /// <summary>
    /// Parses the maps and runs each script once to learn its <c>map(collection, fn)</c> calls.
    /// </summary>
    /// <exception cref="IndexCompilationException">
    /// The name is empty, there is no map, a script does not parse (with the line and column within
    /// that map string) or fails when run, a script registers no map, or a <c>map</c> call is given a
    /// collection that is not a non-empty string or a second argument that is not a function.
    /// </exception>
    /// <param name="additionalSources">RavenDB's <c>AdditionalSources</c>: named scripts run once, in order, before the maps.</param>
    /// <param name="reduce">A map-reduce index's <c>Reduce</c> (<c>groupBy(fn).aggregate(fn)</c>), run once after the maps; null for a map.</param>
    public static JavaScriptMapper Compile(string indexName, IReadOnlyList<string> maps, JavaScriptLimits? limits = null, IReadOnlyDictionary<string, string>? additionalSources = null, string? reduce = null)
    {
        if (string.IsNullOrWhiteSpace(indexName))
        {
            throw new IndexCompilationException(indexName ?? string.Empty, "the index has no name.");
        }

        if (maps is null || maps.Count == 0)
        {
            throw new IndexCompilationException(indexName, "the index has no maps; give at least one, such as map('Orders', o => ({ Company: o.Company })).");
        }

        limits ??= JavaScriptLimits.Default;
        var engine = MapSandbox.CreateEngine(limits);
        try
        {
            var scope = new MapScope(engine);
            additionalSources ??= new Dictionary<string, string>();
            var functions = LoadScripts(indexName, maps, additionalSources, limits, engine, scope);
            var usesLoad = maps.Concat(additionalSources.Values).Any(script => LoadCall().IsMatch(script));
            var mapper = new JavaScriptMapper(indexName, limits, engine, scope, functions, usesLoad);
            if (reduce is not null)
            {
                mapper.CompileReduce(reduce);
            }

            return mapper;
        }
        catch
        {
            engine.Dispose();
            throw;
        }
    }

    private static List<MapFunction> LoadScripts(string indexName, IReadOnlyList<string> maps, IReadOnlyDictionary<string, string> additionalSources, JavaScriptLimits limits, Engine engine, MapScope scope)
    {
        var functions = new List<MapFunction>();
        var current = 0;
        var compiling = true;
        engine.SetValue("map", new ClrFunction(engine, "map", (_, arguments) =>
        {
            var collection = arguments.Length > 0 ? arguments[0] : JsValue.Undefined;
            var function = arguments.Length > 1 ? arguments[1] : JsValue.Undefined;
            if (!compiling)
            {
                throw new JavaScriptException(engine.Intrinsics.TypeError, "map() registers a map when the index is compiled; it cannot be called while documents are mapped.");
            }

            if (!collection.IsString())
            {
                throw new JavaScriptException(engine.Intrinsics.TypeError, $"map(collection, fn) takes the collection name as a string, not {MapScope.Describe(collection)}.");
            }

            if (string.IsNullOrWhiteSpace(collection.AsString()))
            {
                throw new JavaScriptException(engine.Intrinsics.TypeError, "map(collection, fn) was given an empty collection name.");
            }

            if (!function.IsCallable())
            {
                throw new JavaScriptException(engine.Intrinsics.TypeError, $"map('{collection.AsString()}', fn) takes a function as its second argument, not {MapScope.Describe(function)}.");
            }

            functions.Add(new MapFunction(collection.AsString(), function, $"{SourceName(current)} ({collection.AsString()})"));
            return JsValue.Undefined;
        }, 2));
        engine.SetValue("id", new ClrFunction(engine, "id", scope.Id, 1));
        engine.SetValue("load", new ClrFunction(engine, "load", scope.Load, 2));
        var noTracking = new JsObject(engine);
        noTracking.FastSetDataProperty("load", new ClrFunction(engine, "load", scope.LoadWithoutTracking, 2));
        engine.SetValue("noTracking", noTracking);
        engine.SetValue("getMetadata", new ClrFunction(engine, "getMetadata", scope.GetMetadata, 1));
        new MapAttachments(scope, limits).Register(engine);

        // Additional sources first: their functions are globals the maps call.
        foreach (var (name, text) in additionalSources)
        {
            var source = $"AdditionalSources['{name}']";
            var registered = functions.Count;
            Run(indexName, text, source, limits, engine);
            if (functions.Count != registered)
            {
                throw new IndexCompilationException(indexName, $"{source} calls map(); maps go in \"Maps\", additional sources hold the functions they use.");
            }
        }

        for (current = 0; current < maps.Count; current++)
        {
            var source = SourceName(current);
            if (string.IsNullOrWhiteSpace(maps[current]))
            {
                throw new IndexCompilationException(indexName, $"{source} is empty; a map is a script such as map('Orders', o => ({{ Company: o.Company }})).");
            }

            var registered = functions.Count;
            Run(indexName, maps[current], source, limits, engine);
            if (functions.Count == registered)
            {
                throw new IndexCompilationException(indexName, $"{source} registers no map; it must call map('Collection', doc => ({{ ... }})).");
            }
        }

        compiling = false;
        return functions;
    }

    /// <summary>Parses and runs one script of the definition; its errors name <paramref name="source"/> and the line and column in it.</summary>
    private static void Run(string indexName, string text, string source, JavaScriptLimits limits, Engine engine)
    {
        Prepared<Acornima.Ast.Script> script;
        try
        {
            script = Engine.PrepareScript(text, source);
        }
        catch (ScriptPreparationException e) when (e.InnerException is ParseErrorException parse)
        {
            // Acornima's lines count from 1 and its columns from 0.
            throw new IndexCompilationException(indexName, $"{source}: {parse.Description}", parse.LineNumber, parse.Column + 1, e);
        }
        catch (ScriptPreparationException e)
        {
            throw new IndexCompilationException(indexName, $"{source}: {e.Message}", innerException: e);
        }

        engine.Constraints.Reset();
        try
        {
            engine.Execute(script);
        }
        catch (Exception e) when (Describe(e, limits, "the script") is { } problem)
        {
            engine.Advanced.ResetCallStack();
            var (_, line, column) = LocationOf(e);
            throw new IndexCompilationException(indexName, $"{source}: {problem}", line, column, e);
        }
    }

    /// <summary>
    /// Runs every map function registered for the document's collection (compared ignoring case)
    /// and appends their entries to <paramref name="output"/>; a document of another collection
    /// produces nothing. The document is read lazily from its blittable bytes, which need to stay
    /// valid only until this call returns.
    /// </summary>
    /// <param name="loader">Where <c>load(id)</c> finds documents; null when there are none to load.</param>
    /// <exception cref="IndexMapException">
    /// A script error or a sandbox limit. The entries this call had appended are removed (a document
    /// is indexed whole or not at all); the ids it loaded stay, since a change to one of them may be
    /// what makes the document map again. The next call maps normally.
    /// </exception>
    public void Map(MapInput document, IMapDocumentLoader? loader, MapOutput output)
    {
        ArgumentNullException.ThrowIfNull(output);
        var entriesBefore = output.Entries.Count;
        try
        {
            Run(document, loader, output, (result, map) => _converter.AddEntries(result, output.Entries, map));
        }
        catch (IndexMapException)
        {
            output.Entries.RemoveRange(entriesBefore, output.Entries.Count - entriesBefore);
            throw;
        }
    }

    /// <summary>
    /// Runs every map function registered for the document's collection, handing each return value
    /// and the map's name to <paramref name="each"/> while the document is readable;
    /// <paramref name="output"/> collects the ids loaded.
    /// </summary>
    /// <exception cref="IndexMapException">A script error or a sandbox limit (the call stack is reset).</exception>
    private void Run(MapInput document, IMapDocumentLoader? loader, MapOutput output, Action<JsValue, string> each)
    {
        ArgumentNullException.ThrowIfNull(document);
        if (!_maps.TryGetValue(document.Collection, out var functions))
        {
            return;
        }

        _scope.Begin(document, loader, output);
        try
        {
            foreach (var map in functions)
            {
                // Limits are per map function and document: the statement count, the allocation
                // baseline and the deadline start again here.
                _engine.Constraints.Reset();
                var result = _engine.Call(map.Function, JsValue.Undefined, [_scope.CreateRoot(document)]);
                each(result, map.Name);
            }
        }
        catch (IndexMapException e)
        {
            throw new IndexMapException($"Index '{Name}' could not map '{document.Id}': {e.Message}", e);
        }
        catch (Exception e) when (Describe(e, Limits, "the map") is { } problem)
        {
            // A limit can stop the script anywhere in its calls; the next document starts at the bottom.
            _engine.Advanced.ResetCallStack();
            var (source, line, column) = LocationOf(e);
            var where = line is null ? string.Empty : $" ({source}, line {line}, column {column})";
            throw new IndexMapException($"Index '{Name}' could not map '{document.Id}': {problem}{where}", e);
        }
        finally
        {
            _scope.End();
        }
    }

    public void Dispose() => _engine.Dispose();

    private static string SourceName(int map) => $"Maps[{map}]";

    /// <summary>What went wrong, for a script error or a sandbox limit; null for anything else (a bug, not the script's).</summary>
    internal static string? Describe(Exception exception, JavaScriptLimits limits, string subject) => exception switch
    {
        JavaScriptException { Error: ErrorInstance } e => ErrorName(e.Error) is { } name ? $"{name}: {e.Message}" : e.Message,
        // A thrown value that is not an Error: Jint's message is its message property or its text
        // ("undefined" for an object without one, which says nothing).
        JavaScriptException { Error: ObjectInstance } e when e.Message == "undefined" => $"uncaught exception: {MapScope.Describe(e.Error)}",
        JavaScriptException e => $"uncaught exception: {e.Message}",
        StatementsCountOverflowException => $"{subject} ran past its limit of {limits.MaxStatements} statements",
        TimeoutException => $"{subject} ran past its time limit of {limits.Timeout.TotalMilliseconds:0} ms",
        RecursionDepthOverflowException => $"{subject} nested calls deeper than its limit of {limits.MaxRecursionDepth}",
        MemoryLimitExceededException e => $"{subject} ran past its memory limit: {e.Message}",
        JintException e => e.Message,
        _ => null,
    };

    /// <summary>
    /// The <c>name</c> of a thrown Error ("TypeError"), read from data properties only: a getter
    /// here would run script code outside the sandbox's reset.
    /// </summary>
    private static string? ErrorName(JsValue error)
    {
        if (error is not ErrorInstance)
        {
            return null;
        }

        var current = (ObjectInstance)error;
        for (var depth = 0; depth < 8 && current is not null; depth++, current = current.Prototype)
        {
            var descriptor = current.GetOwnProperty("name");
            if (descriptor != Jint.Runtime.Descriptors.PropertyDescriptor.Undefined)
            {
                return descriptor.IsDataDescriptor() && descriptor.Value.IsString() ? descriptor.Value.AsString() : null;
            }
        }

        return null;
    }

    /// <summary>Where in which map string the script was (1-based line and column), when Jint knows.</summary>
    internal static (string? Source, int? Line, int? Column) LocationOf(Exception exception)
    {
        SourceLocation location;
        if (exception is JavaScriptException script)
        {
            location = script.Location;
        }
        else if (!JintException.TryGetJavaScriptLocation(exception, out location))
        {
            return (null, null, null);
        }

        // Jint's lines count from 1 and its columns from 0.
        return location.Start.Line <= 0 ? (null, null, null) : (location.SourceFile, location.Start.Line, location.Start.Column + 1);
    }

    [GeneratedRegex(@"(?<![\w$.])(?:noTracking\s*\.\s*)?load\s*\(")]
    private static partial Regex LoadCall();

    /// <summary>One <c>map(collection, fn)</c> call; <see cref="Name"/> names it in errors.</summary>
    private sealed record MapFunction(string Collection, JsValue Function, string Name);
}
