using System.Text;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Mapping;
using Jint;
using Jint.Native;
using Jint.Native.Json;
using Jint.Runtime;
using Jint.Runtime.Interop;

namespace Jackdaw.Server.Indexing.JavaScript;

// The reduce of a JavaScript map-reduce index, as RavenDB writes it:
// Reduce = "groupBy(r => r.Company).aggregate(g => ({ Company: g.key, Count: g.values.reduce((c, r) => c + r.Count, 0) }))".
// The Reduce script runs once, after the maps, in the same engine: groupBy(fn) records the key
// function, .aggregate(fn) the function that reduces one group ({ key, values }). Keys and entries
// leave the engine as JSON (JSON.stringify's text: a key's text is its identity), and values come
// back parsed from it, so the reduce sees plain objects whether they are map entries or results of
// an earlier reduce.
public sealed partial class JavaScriptMapper
{
    private JsValue? _groupBy;
    private JsValue? _aggregate;
    private MapOutput? _loads;
    private JsonSerializer? _serializer;
    private JsonParser? _parser;

    /// <summary>Whether the mapper was compiled with a <c>Reduce</c>.</summary>
    public bool HasReduce => _aggregate is not null;

    private void CompileReduce(string reduce)
    {
        var compiling = true;
        JsValue? keyFunction = null;
        JsValue? aggregateFunction = null;
        _engine.SetValue("groupBy", new ClrFunction(_engine, "groupBy", (_, arguments) =>
        {
            var function = arguments.Length > 0 ? arguments[0] : JsValue.Undefined;
            if (!compiling)
            {
                throw new JavaScriptException(_engine.Intrinsics.TypeError, "groupBy() declares the reduce when the index is compiled; it cannot be called while documents are reduced.");
            }

            if (!function.IsCallable())
            {
                throw new JavaScriptException(_engine.Intrinsics.TypeError, $"groupBy(fn) takes a function giving an entry's key, such as groupBy(r => r.Company), not {MapScope.Describe(function)}.");
            }

            keyFunction = function;
            var grouping = new JsObject(_engine);
            grouping.FastSetDataProperty("aggregate", new ClrFunction(_engine, "aggregate", (_, aggregateArguments) =>
            {
                var aggregate = aggregateArguments.Length > 0 ? aggregateArguments[0] : JsValue.Undefined;
                if (!aggregate.IsCallable())
                {
                    throw new JavaScriptException(_engine.Intrinsics.TypeError, $"aggregate(fn) takes a function reducing a group ({{ key, values }}) to its result, not {MapScope.Describe(aggregate)}.");
                }

                aggregateFunction = aggregate;
                return JsValue.Undefined;
            }, 1));
            return grouping;
        }, 1));
        Run(Name, reduce, "Reduce", Limits, _engine);
        compiling = false;
        if (keyFunction is null || aggregateFunction is null)
        {
            throw new IndexCompilationException(Name, "its Reduce must be groupBy(r => key).aggregate(g => result), such as groupBy(r => r.Company).aggregate(g => ({ Company: g.key, Count: g.values.reduce((c, r) => c + r.Count, 0) })).");
        }

        _groupBy = keyFunction;
        _aggregate = aggregateFunction;
        _loads = new MapOutput();
        _serializer = new JsonSerializer(_engine);
        _parser = new JsonParser(_engine);
    }

    /// <inheritdoc/>
    public void MapEntries(MapInput document, IMapDocumentLoader? loader, ReduceMapOutput output)
    {
        ArgumentNullException.ThrowIfNull(output);
        if (_groupBy is null)
        {
            throw new InvalidOperationException($"Index '{Name}' has no Reduce.");
        }

        var before = output.Entries.Count;
        _loads!.Clear();
        try
        {
            Run(document, loader, _loads, (result, map) => AddReduceEntries(result, output, map));
        }
        catch (IndexMapException)
        {
            output.Entries.RemoveRange(before, output.Entries.Count - before);
            throw;
        }
        finally
        {
            output.LoadedIds.AddRange(_loads.LoadedIds);
        }
    }

    private void AddReduceEntries(JsValue result, ReduceMapOutput output, string map)
    {
        if (result.IsNull() || result.IsUndefined())
        {
            return;
        }

        if (result is JsArray array)
        {
            var length = (long)array.Length;
            if (length > Limits.MaxArrayLength)
            {
                throw new IndexMapException($"{map} returned {length} entries; the most is {Limits.MaxArrayLength}.");
            }

            for (var i = 0; i < length; i++)
            {
                var item = array.Get(i);
                if (!item.IsNull() && !item.IsUndefined())
                {
                    AddReduceEntry(item, output, map);
                }
            }

            return;
        }

        AddReduceEntry(result, output, map);
    }

    private void AddReduceEntry(JsValue entry, ReduceMapOutput output, string map)
    {
        if (!entry.IsObject() || entry is JsArray)
        {
            throw new IndexMapException($"{map} returned {MapScope.Describe(entry)}; a map of a map-reduce index returns objects (or an array of them).");
        }

        var key = _engine.Call(_groupBy!, JsValue.Undefined, [entry]);
        output.Entries.Add((Json(key), Json(entry)));
    }

    private byte[] Json(JsValue value)
    {
        var text = _serializer!.Serialize(value, JsValue.Undefined, JsValue.Undefined);
        return text.IsString() ? Encoding.UTF8.GetBytes(text.AsString()) : "null"u8.ToArray();
    }

    private JsValue Parse(ReadOnlySpan<byte> json) => _parser!.Parse(Encoding.UTF8.GetString(json));

    /// <inheritdoc/>
    public void Reduce(ReadOnlySpan<byte> key, IReadOnlyList<ReadOnlyMemory<byte>> values, List<byte[]> output)
    {
        if (_aggregate is null)
        {
            throw new InvalidOperationException($"Index '{Name}' has no Reduce.");
        }

        var before = output.Count;
        try
        {
            _engine.Constraints.Reset();
            var items = new JsValue[values.Count];
            for (var i = 0; i < items.Length; i++)
            {
                items[i] = Parse(values[i].Span);
            }

            var group = new JsObject(_engine);
            group.FastSetDataProperty("key", Parse(key));
            group.FastSetDataProperty("values", new JsArray(_engine, items));
            var result = _engine.Call(_aggregate, JsValue.Undefined, [group]);
            AddResults(result, output);
        }
        catch (Exception e) when (e is IndexMapException || Describe(e, Limits, "the reduce") is not null)
        {
            output.RemoveRange(before, output.Count - before);
            _engine.Advanced.ResetCallStack();
            var problem = e is IndexMapException ? e.Message : Describe(e, Limits, "the reduce");
            var (source, line, column) = LocationOf(e);
            var where = line is null ? string.Empty : $" ({source}, line {line}, column {column})";
            throw new IndexMapException($"Index '{Name}' could not reduce the key {Encoding.UTF8.GetString(key)}: {problem}{where}", e);
        }
    }

    private void AddResults(JsValue result, List<byte[]> output)
    {
        if (result.IsNull() || result.IsUndefined())
        {
            return;
        }

        if (result is JsArray array)
        {
            for (var i = 0; i < (long)array.Length; i++)
            {
                AddResults(array.Get(i), output);
            }

            return;
        }

        if (!result.IsObject())
        {
            throw new IndexMapException($"aggregate(fn) returned {MapScope.Describe(result)}; it must return an object (the group's result).");
        }

        output.Add(Json(result));
    }
}
