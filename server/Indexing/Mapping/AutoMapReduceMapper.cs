using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Indexing.Mapping;

/// <summary>
/// The map and reduce of an auto map-reduce index (a <c>group by</c> query), in C#: no JavaScript.
/// <list type="bullet">
/// <item><b>Map</b>: a document gives one entry <c>{"Company":"companies/1","Count":1,"Freight":32.38}</c>:
///   each group-by field (named by its path), then each aggregation (<c>Count</c> is 1, a sum the
///   numbers its path reaches). Paths are read by <see cref="DocumentPath"/>, as auto-indexes read them.
///   A group-by path through an array (<c>Lines[].Product</c>) gives one entry per element of that
///   array (the first array the first such path marks with <c>[]</c>: its scope); the other group-by
///   fields and the sums under the same array (<c>sum(Lines[].Quantity)</c>) are read in that element,
///   the rest in the document.</item>
/// <item><b>Key</b>: the group-by values as a JSON object in the definition's (sorted) order, written
///   canonically, so that equal values are equal bytes: strings as they are (JSON-escaped the one way
///   <see cref="Utf8JsonWriter"/> does), numbers as decimals without trailing zeros (<c>1</c>,
///   <c>1.0</c> and <c>1e0</c> are one key), a missing value as <c>null</c>, several values (a path
///   through an array outside the scope) as an array, an object as stored.</item>
/// <item><b>Reduce</b>: the key's values, then <c>Count</c> and each sum added up over the values
///   (entries or earlier results alike: the result has the entry's shape, so the reduce is
///   re-reducible). A missing or non-numeric value adds 0, as RavenDB's auto map-reduce; numbers are
///   added as decimals, so a sum does not depend on the order the tree reduces in.</item>
/// </list>
/// </summary>
public sealed class AutoMapReduceMapper : IIndexMapper, IReduceFunctions
{
    private static readonly JsonWriterOptions WriterOptions = new() { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping, SkipValidation = true };

    private readonly string[] _keyNames;
    private readonly DocumentPath[] _keyPaths;

    // For a key in the scope: its path inside an element (null: the element itself).
    private readonly DocumentPath?[] _keyInScope;
    private readonly bool[] _keyScoped;
    private readonly AutoAggregationField[] _aggregations;
    private readonly DocumentPath?[] _sumPaths;
    private readonly DocumentPath?[] _sumInScope;
    private readonly bool[] _sumScoped;
    private readonly DocumentPath? _scope;

    private readonly ArrayBufferWriter<byte> _buffer = new(256);
    private readonly Utf8JsonWriter _writer;
    private readonly List<object?>[] _keyValues;
    private readonly decimal[] _sums;

    public AutoMapReduceMapper(IndexDefinition definition)
    {
        if (!definition.IsAutoMapReduce)
        {
            throw new ArgumentException($"Index '{definition.Name}' is not an auto map-reduce index.", nameof(definition));
        }
        Collections = [definition.Collection!];
        _keyNames = definition.AutoFields.Select(f => f.Path).ToArray();
        _keyPaths = _keyNames.Select(DocumentPath.Parse).ToArray();
        _aggregations = definition.Aggregations.ToArray();
        _sumPaths = _aggregations.Select(a => a.Operation == AggregationOperation.Sum ? DocumentPath.Parse(a.Path) : null).ToArray();

        // The scope: the first array the first group-by path marks with [] (Lines[] of Lines[].Product).
        var scopeText = _keyNames.Select(ScopeOf).FirstOrDefault(s => s is not null);
        _scope = scopeText is null ? null : DocumentPath.Parse(scopeText);
        _keyScoped = new bool[_keyNames.Length];
        _keyInScope = new DocumentPath?[_keyNames.Length];
        for (var i = 0; i < _keyNames.Length; i++)
        {
            (_keyScoped[i], _keyInScope[i]) = Inside(scopeText, _keyNames[i]);
        }
        _sumScoped = new bool[_aggregations.Length];
        _sumInScope = new DocumentPath?[_aggregations.Length];
        for (var i = 0; i < _aggregations.Length; i++)
        {
            if (_sumPaths[i] is not null)
            {
                (_sumScoped[i], _sumInScope[i]) = Inside(scopeText, _aggregations[i].Path);
            }
        }
        _writer = new Utf8JsonWriter(_buffer, WriterOptions);
        _keyValues = _keyNames.Select(_ => new List<object?>()).ToArray();
        _sums = new decimal[_aggregations.Length];
    }

    public IReadOnlyList<string> Collections { get; }

    public bool UsesLoad => false;

    /// <summary>The prefix of <paramref name="path"/> up to its first <c>[]</c> (null when it has none).</summary>
    private static string? ScopeOf(string path)
    {
        var at = path.IndexOf("[]", StringComparison.Ordinal);
        return at < 0 ? null : path[..at];
    }

    /// <summary>Whether <paramref name="path"/> is read in the scope's elements, and its path inside one (null: the element).</summary>
    private static (bool Scoped, DocumentPath? Inside) Inside(string? scope, string path)
    {
        if (scope is null)
        {
            return (false, null);
        }
        if (path == scope + "[]")
        {
            return (true, null);
        }
        var prefix = scope + "[].";
        return path.StartsWith(prefix, StringComparison.Ordinal) ? (true, DocumentPath.Parse(path[prefix.Length..])) : (false, null);
    }

    public void MapEntries(MapInput document, IMapDocumentLoader? loader, ReduceMapOutput output)
    {
        var blittable = document.Blittable;
        try
        {
            if (_scope is null)
            {
                ReadOutsideScope(blittable.Span);
                AddEntry(output);
                return;
            }
            ReadOutsideScope(blittable.Span);
            var elements = new ScopeVisitor(this, blittable, output);
            _scope.Walk(blittable.Span, ref elements);
        }
        catch (OverflowException e)
        {
            throw new IndexMapException($"Document '{document.Id}': a number to sum is beyond the range of a decimal (±7.9e28).", e);
        }
    }

    /// <summary>Reads the group-by values and sums that are not in the scope (all of them when there is none).</summary>
    private void ReadOutsideScope(ReadOnlySpan<byte> document)
    {
        for (var i = 0; i < _keyPaths.Length; i++)
        {
            if (!_keyScoped[i])
            {
                _keyValues[i].Clear();
                var values = new ValueCollector(_keyValues[i]);
                _keyPaths[i].Walk(document, ref values);
            }
        }
        for (var i = 0; i < _sumPaths.Length; i++)
        {
            if (_sumPaths[i] is { } path && !_sumScoped[i])
            {
                var sum = new SumCollector(_sums, i);
                _sums[i] = 0;
                path.Walk(document, ref sum);
            }
        }
    }

    /// <summary>Reads the scoped values in one element of the scope.</summary>
    private void ReadInElement(PathLeaf element, int budget)
    {
        var isObject = element.Kind == PathLeafKind.Object;
        for (var i = 0; i < _keyPaths.Length; i++)
        {
            if (!_keyScoped[i])
            {
                continue;
            }
            _keyValues[i].Clear();
            if (_keyInScope[i] is null)
            {
                _keyValues[i].Add(ValueCollector.ValueOf(element));
            }
            else if (isObject)
            {
                var values = new ValueCollector(_keyValues[i]);
                _keyInScope[i]!.Walk(element.Value.GetObject(), budget, ref values);
            }
        }
        for (var i = 0; i < _sumPaths.Length; i++)
        {
            if (_sumPaths[i] is null || !_sumScoped[i])
            {
                continue;
            }
            _sums[i] = 0;
            var sum = new SumCollector(_sums, i);
            if (_sumInScope[i] is null)
            {
                sum.Leaf(element);
            }
            else if (isObject)
            {
                _sumInScope[i]!.Walk(element.Value.GetObject(), budget, ref sum);
            }
        }
    }

    private void AddEntry(ReduceMapOutput output)
    {
        _buffer.ResetWrittenCount();
        _writer.Reset(_buffer);
        WriteKeyObject();
        var key = _buffer.WrittenSpan.ToArray();

        _buffer.ResetWrittenCount();
        _writer.Reset(_buffer);
        _writer.WriteStartObject();
        for (var i = 0; i < _keyNames.Length; i++)
        {
            _writer.WritePropertyName(_keyNames[i]);
            WriteValues(_keyValues[i]);
        }
        for (var i = 0; i < _aggregations.Length; i++)
        {
            _writer.WritePropertyName(_aggregations[i].Name);
            if (_aggregations[i].Operation == AggregationOperation.Count)
            {
                _writer.WriteNumberValue(1);
            }
            else
            {
                WriteNumber(_writer, _sums[i]);
            }
        }
        _writer.WriteEndObject();
        _writer.Flush();
        output.Entries.Add((key, _buffer.WrittenSpan.ToArray()));
    }

    private void WriteKeyObject()
    {
        _writer.WriteStartObject();
        for (var i = 0; i < _keyNames.Length; i++)
        {
            _writer.WritePropertyName(_keyNames[i]);
            WriteValues(_keyValues[i]);
        }
        _writer.WriteEndObject();
        _writer.Flush();
    }

    private void WriteValues(List<object?> values)
    {
        if (values.Count == 0)
        {
            _writer.WriteNullValue();
            return;
        }
        if (values.Count == 1)
        {
            WriteValue(values[0]);
            return;
        }
        _writer.WriteStartArray();
        foreach (var value in values)
        {
            WriteValue(value);
        }
        _writer.WriteEndArray();
    }

    private void WriteValue(object? value)
    {
        switch (value)
        {
            case null:
                _writer.WriteNullValue();
                break;
            case bool b:
                _writer.WriteBooleanValue(b);
                break;
            case decimal d:
                WriteNumber(_writer, d);
                break;
            case double d:
                _writer.WriteNumberValue(d);
                break;
            case string s:
                _writer.WriteStringValue(s);
                break;
            case byte[] raw:
                _writer.WriteRawValue(raw, skipInputValidation: true);
                break;
        }
    }

    /// <summary>A decimal as canonical JSON: no trailing zeros (<c>3.00</c> is <c>3</c>).</summary>
    internal static void WriteNumber(Utf8JsonWriter writer, decimal value)
    {
        var normalized = value / 1.0000000000000000000000000000m;
        if (normalized == decimal.Truncate(normalized) && normalized is >= long.MinValue and <= long.MaxValue)
        {
            writer.WriteNumberValue((long)normalized);
            return;
        }
        writer.WriteNumberValue(normalized);
    }

    public void Reduce(ReadOnlySpan<byte> key, IReadOnlyList<ReadOnlyMemory<byte>> values, List<byte[]> output)
    {
        long count = 0;
        Array.Clear(_sums);
        foreach (var value in values)
        {
            var reader = new Utf8JsonReader(value.Span);
            if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            {
                throw new IndexMapException("A value to reduce is not a JSON object.");
            }
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                var field = -1;
                for (var i = 0; i < _aggregations.Length; i++)
                {
                    if (reader.ValueTextEquals(_aggregations[i].Name))
                    {
                        field = i;
                        break;
                    }
                }
                reader.Read();
                if (field < 0 || reader.TokenType != JsonTokenType.Number)
                {
                    reader.Skip();
                    continue;
                }
                try
                {
                    if (_aggregations[field].Operation == AggregationOperation.Count)
                    {
                        count += reader.GetInt64();
                    }
                    else
                    {
                        _sums[field] += reader.TryGetDecimal(out var number) ? number : (decimal)reader.GetDouble();
                    }
                }
                catch (OverflowException e)
                {
                    throw new IndexMapException($"The {_aggregations[field].Name} of the group {System.Text.Encoding.UTF8.GetString(key)} is beyond the range of a decimal (±7.9e28).", e);
                }
            }
        }

        _buffer.ResetWrittenCount();
        _writer.Reset(_buffer);
        _writer.WriteStartObject();
        // The key's values, copied as the key holds them.
        var keyReader = new Utf8JsonReader(key);
        keyReader.Read();
        while (keyReader.Read() && keyReader.TokenType == JsonTokenType.PropertyName)
        {
            _writer.WritePropertyName(keyReader.GetString()!);
            keyReader.Read();
            var start = (int)keyReader.TokenStartIndex;
            keyReader.Skip();
            _writer.WriteRawValue(key[start..(int)keyReader.BytesConsumed], skipInputValidation: true);
        }
        for (var i = 0; i < _aggregations.Length; i++)
        {
            _writer.WritePropertyName(_aggregations[i].Name);
            if (_aggregations[i].Operation == AggregationOperation.Count)
            {
                _writer.WriteNumberValue(count);
            }
            else
            {
                WriteNumber(_writer, _sums[i]);
            }
        }
        _writer.WriteEndObject();
        _writer.Flush();
        output.Add(_buffer.WrittenSpan.ToArray());
    }

    /// <summary>The entries as index fields (a test run's raw map output).</summary>
    public void Map(MapInput document, IMapDocumentLoader? loader, MapOutput output)
    {
        var entries = new ReduceMapOutput();
        MapEntries(document, loader, entries);
        foreach (var (_, entry) in entries.Entries)
        {
            using var json = JsonDocument.Parse(entry);
            output.Entries.Add(json.RootElement.EnumerateObject().Select(p => new IndexField(p.Name, p.Value.ValueKind switch
            {
                JsonValueKind.String => p.Value.GetString(),
                JsonValueKind.Number => p.Value.TryGetInt64(out var l) ? (object)l : p.Value.GetDouble(),
                JsonValueKind.True => true,
                JsonValueKind.False => false,
                JsonValueKind.Null => null,
                _ => (object)new IndexJson(p.Value.GetRawText()),
            })).ToArray());
        }
    }

    /// <summary>Walks the scope's elements: one entry per element.</summary>
    private readonly struct ScopeVisitor(AutoMapReduceMapper mapper, ReadOnlyMemory<byte> document, ReduceMapOutput output) : IDocumentPathVisitor
    {
        public bool Leaf(PathLeaf leaf)
        {
            mapper.ReadInElement(leaf, document.Length);
            mapper.AddEntry(output);
            return true;
        }

        public void EnterArray()
        {
        }

        public void LeaveArray()
        {
        }
    }

    /// <summary>Collects the values a path reaches, canonically (see the class summary).</summary>
    private readonly struct ValueCollector(List<object?> values) : IDocumentPathVisitor
    {
        public bool Leaf(PathLeaf leaf)
        {
            values.Add(ValueOf(leaf));
            return true;
        }

        public static object? ValueOf(PathLeaf leaf) => leaf.Kind switch
        {
            PathLeafKind.Null => null,
            PathLeafKind.True => true,
            PathLeafKind.False => false,
            PathLeafKind.String => leaf.GetString(),
            PathLeafKind.Number => leaf.Value.TryGetDecimal(out var d) ? d : leaf.Number,
            _ => Raw(leaf),
        };

        private static byte[] Raw(PathLeaf leaf)
        {
            var raw = new ArrayBufferWriter<byte>(64);
            BlittableJsonWriter.WriteValue(leaf.Value, raw);
            return raw.WrittenSpan.ToArray();
        }

        public void EnterArray()
        {
        }

        public void LeaveArray()
        {
        }
    }

    /// <summary>Adds up the numbers a path reaches into one sum; anything else adds 0.</summary>
    private readonly struct SumCollector(decimal[] sums, int index) : IDocumentPathVisitor
    {
        public bool Leaf(PathLeaf leaf)
        {
            if (leaf.Kind == PathLeafKind.Number)
            {
                sums[index] += leaf.Value.TryGetDecimal(out var d) ? d : (decimal)leaf.Number;
            }
            return true;
        }

        public void EnterArray()
        {
        }

        public void LeaveArray()
        {
        }
    }
}
