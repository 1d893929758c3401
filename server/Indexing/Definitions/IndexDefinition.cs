using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Indexing.Definitions;

/// <summary>
/// An index definition: a static one (<see cref="IndexType.Map"/>: JavaScript maps and field
/// options, RavenDB's JSON shape) or an auto-index (<see cref="IndexType.AutoMap"/>: a collection and
/// the fields queries asked for). Stored as JSON in the database's <c>Indexes</c> tree.
/// </summary>
public sealed class IndexDefinition
{
    /// <summary>The longest index name.</summary>
    public const int MaxNameLength = 256;

    /// <summary>The longest index folder name (well under the file systems' 255 bytes).</summary>
    public const int MaxFolderChars = 120;

    private static readonly char[] ForbiddenNameCharacters = ['\\', ':', '*', '?', '"', '<', '>', '|'];

    private IndexDefinition(string name, IndexType type, IReadOnlyList<string> maps, IReadOnlyDictionary<string, IndexFieldOptions> fields, string? collection, IReadOnlyList<AutoIndexField> autoFields, DateTime createdAt, IReadOnlyDictionary<string, string>? additionalSources = null, ReduceDefinition? reduce = null, IReadOnlyList<AutoAggregationField>? aggregations = null)
    {
        Name = name;
        Aggregations = aggregations ?? [];
        ReduceSpec = reduce;
        Type = type;
        Maps = maps;
        AdditionalSources = additionalSources ?? NoSources;
        Fields = fields;
        Collection = collection;
        AutoFields = autoFields;
        CreatedAt = createdAt;
    }

    public string Name { get; }

    public IndexType Type { get; }

    /// <summary>The JavaScript maps of a static index (empty for an auto-index).</summary>
    public IReadOnlyList<string> Maps { get; }

    /// <summary>
    /// RavenDB's <c>AdditionalSources</c>: named scripts run before the maps, whose functions and
    /// values the maps may use (ordinal names, in the order given; empty for most indexes).
    /// </summary>
    public IReadOnlyDictionary<string, string> AdditionalSources { get; }

    private static readonly IReadOnlyDictionary<string, string> NoSources = new Dictionary<string, string>(StringComparer.Ordinal);

    /// <summary>Field options of a static index, by field name (case-sensitive, as the map outputs them).</summary>
    public IReadOnlyDictionary<string, IndexFieldOptions> Fields { get; }

    /// <summary>The collection of an auto-index.</summary>
    public string? Collection { get; }

    /// <summary>The fields of an auto-index; of an auto map-reduce index, its group-by fields.</summary>
    public IReadOnlyList<AutoIndexField> AutoFields { get; }

    /// <summary>The aggregations of an auto map-reduce index (<c>count()</c>, <c>sum(path)</c>; empty otherwise).</summary>
    public IReadOnlyList<AutoAggregationField> Aggregations { get; }

    public DateTime CreatedAt { get; }

    /// <summary>An auto map index (made for queries' fields, read by <see cref="Mapping.AutoIndexMapper"/>, widened by fields).</summary>
    public bool IsAuto => Type == IndexType.AutoMap;

    /// <summary>An auto map-reduce index (made for a <c>group by</c> query).</summary>
    public bool IsAutoMapReduce => Type == IndexType.AutoMapReduce;

    /// <summary>
    /// Made by queries, of either kind: such an index is idled and deleted when no query uses it,
    /// and retired once a wider one of its kind has caught up (housekeeping).
    /// </summary>
    public bool IsAutoIndex => IsAuto || IsAutoMapReduce;

    /// <summary>Whether entries are reduced by key (a static map-reduce, or an auto map-reduce from a <c>group by</c> query).</summary>
    public bool IsMapReduce => Type is IndexType.MapReduce or IndexType.AutoMapReduce;

    /// <summary>The reduce of a static map-reduce index, and where its results go (null for a map).</summary>
    public ReduceDefinition? ReduceSpec { get; }

    /// <summary>The JavaScript <c>Reduce</c> of a static map-reduce index (null otherwise).</summary>
    public string? Reduce => ReduceSpec?.Script;

    /// <summary>Options of a field of a static index (the defaults when the definition does not name it).</summary>
    public IndexFieldOptions OptionsOf(string field) =>
        Fields.TryGetValue(field, out var options) ? options : DefaultOptions;

    internal static readonly IndexFieldOptions DefaultOptions = new(FieldIndexing.Default, Stored: false);

    /// <summary>A static index from code or a request.</summary>
    public static IndexDefinition CreateStatic(string name, IReadOnlyList<string> maps, IReadOnlyDictionary<string, IndexFieldOptions>? fields = null, IReadOnlyDictionary<string, string>? additionalSources = null)
    {
        ValidateName(name);
        if (maps.Count == 0)
        {
            throw new IndexCompilationException(name, "it has no maps; give at least one \"map('Collection', doc => ({ ... }))\".");
        }
        var sources = additionalSources is null or { Count: 0 } ? NoSources : new Dictionary<string, string>(additionalSources, StringComparer.Ordinal);
        return new IndexDefinition(name, IndexType.Map, maps.ToArray(), new Dictionary<string, IndexFieldOptions>(fields ?? new Dictionary<string, IndexFieldOptions>(), StringComparer.Ordinal), null, [], DateTime.UtcNow, sources);
    }

    /// <summary>A static map-reduce index: JavaScript maps and a <c>Reduce</c> (<c>groupBy(...).aggregate(...)</c>).</summary>
    public static IndexDefinition CreateMapReduce(string name, IReadOnlyList<string> maps, ReduceDefinition reduce, IReadOnlyDictionary<string, IndexFieldOptions>? fields = null, IReadOnlyDictionary<string, string>? additionalSources = null)
    {
        var map = CreateStatic(name, maps, fields, additionalSources);
        if (string.IsNullOrWhiteSpace(reduce.Script))
        {
            throw new IndexCompilationException(name, "its Reduce is empty; give \"groupBy(r => r.Key).aggregate(g => ({ Key: g.key, Count: g.values.reduce((c, r) => c + r.Count, 0) }))\".");
        }
        return new IndexDefinition(name, IndexType.MapReduce, map.Maps, map.Fields, null, [], map.CreatedAt, map.AdditionalSources, reduce);
    }

    /// <summary>An auto-index over <paramref name="collection"/>, named as RavenDB names them (<c>Auto/Orders/ByCompanyAndShipTo.City</c>).</summary>
    public static IndexDefinition CreateAuto(string collection, IEnumerable<AutoIndexField> fields)
    {
        // Paths are case-sensitive, as a document's properties are: Name and name are two fields
        // (the index is then Auto/Users/ByNameAndname, not a Name index that cannot answer name).
        var ordered = fields.DistinctBy(f => f.Key, StringComparer.Ordinal).OrderBy(f => f.Key, StringComparer.OrdinalIgnoreCase).ThenBy(f => f.Key, StringComparer.Ordinal).ToArray();
        var name = "Auto/" + collection + "/By" + string.Join("And", ordered.Select(f => f.Indexing switch
        {
            FieldIndexing.Search => $"Search({f.Path})",
            FieldIndexing.Exact => $"Exact({f.Path})",
            _ => f.Path,
        }));
        return new IndexDefinition(name, IndexType.AutoMap, [], new Dictionary<string, IndexFieldOptions>(), collection, ordered, DateTime.UtcNow);
    }

    /// <summary>
    /// An auto map-reduce index over <paramref name="collection"/> for a <c>group by</c> query, named
    /// as RavenDB names them: the aggregations, then the group-by fields, each sorted
    /// (<c>Auto/Orders/ByCountAndFreightReducedByCompany</c>; <c>Auto/OrdersReducedByCompany</c>
    /// without aggregations). The order of the fields given does not matter.
    /// </summary>
    public static IndexDefinition CreateAutoMapReduce(string collection, IEnumerable<string> groupBy, IEnumerable<AutoAggregationField> aggregations)
    {
        // RavenDB sorts with the culture's comparer (invariant on its servers).
        var keys = groupBy.Distinct(StringComparer.Ordinal).Order(StringComparer.InvariantCulture).Select(p => new AutoIndexField(p, FieldIndexing.Default)).ToArray();
        if (keys.Length == 0)
        {
            throw new ArgumentException("An auto map-reduce index needs at least one group-by field.", nameof(groupBy));
        }
        var sums = aggregations.DistinctBy(a => a.Name, StringComparer.Ordinal).OrderBy(a => a.Name, StringComparer.InvariantCulture).ToArray();
        var by = sums.Length == 0 ? "" : "/By" + string.Join("And", sums.Select(a => a.Name));
        var name = "Auto/" + collection + by + "ReducedBy" + string.Join("And", keys.Select(k => k.Path));
        return new IndexDefinition(name, IndexType.AutoMapReduce, [], new Dictionary<string, IndexFieldOptions>(), collection, keys, DateTime.UtcNow, aggregations: sums);
    }

    /// <summary>The same definition under another name (a replacement, and the index it becomes at the swap).</summary>
    public IndexDefinition WithName(string name) => new(name, Type, Maps, Fields, Collection, AutoFields, CreatedAt, AdditionalSources, ReduceSpec, Aggregations);

    /// <summary>Whether two definitions would build the same index (same maps, whitespace aside, and same field options).</summary>
    public bool SameAs(IndexDefinition other)
    {
        if (Type != other.Type || !string.Equals(Name, other.Name, StringComparison.OrdinalIgnoreCase))
        {
            return false;
        }
        if (IsAuto)
        {
            return string.Equals(Collection, other.Collection, StringComparison.OrdinalIgnoreCase) && AutoFields.SequenceEqual(other.AutoFields);
        }
        if (IsAutoMapReduce)
        {
            return string.Equals(Collection, other.Collection, StringComparison.OrdinalIgnoreCase) && AutoFields.SequenceEqual(other.AutoFields) && Aggregations.SequenceEqual(other.Aggregations);
        }
        if (!Maps.Select(NormalizeScript).SequenceEqual(other.Maps.Select(NormalizeScript)))
        {
            return false;
        }
        if (IsMapReduce && !ReduceSpec!.SameAs(other.ReduceSpec!, NormalizeScript))
        {
            return false;
        }
        if (AdditionalSources.Count != other.AdditionalSources.Count
            || AdditionalSources.Any(s => !other.AdditionalSources.TryGetValue(s.Key, out var theirs) || NormalizeScript(theirs) != NormalizeScript(s.Value)))
        {
            return false;
        }
        var mine = Fields.Where(f => f.Value != DefaultOptions).ToDictionary();
        var theirs = other.Fields.Where(f => f.Value != DefaultOptions).ToDictionary();
        return mine.Count == theirs.Count && mine.All(f => theirs.TryGetValue(f.Key, out var o) && o == f.Value);
    }

    private static string NormalizeScript(string script)
    {
        var builder = new StringBuilder(script.Length);
        var space = false;
        foreach (var c in script.Trim())
        {
            if (char.IsWhiteSpace(c))
            {
                space = true;
                continue;
            }
            if (space && builder.Length > 0)
            {
                builder.Append(' ');
            }
            space = false;
            builder.Append(c);
        }
        return builder.ToString();
    }

    /// <exception cref="BadRequestException">The name is empty, too long, or has a character that cannot name a folder.</exception>
    public static void ValidateName(string? name)
    {
        if (string.IsNullOrWhiteSpace(name))
        {
            throw new BadRequestException("An index needs a name (\"Name\": \"Orders/Totals\").");
        }
        if (name.Length > MaxNameLength)
        {
            throw new BadRequestException($"The index name is {name.Length} characters long; the most is {MaxNameLength}.");
        }
        foreach (var c in name)
        {
            if (char.IsControl(c) || Array.IndexOf(ForbiddenNameCharacters, c) >= 0)
            {
                throw new BadRequestException($"The index name '{name}' has the character U+{(int)c:X4}, which an index name cannot have (no control characters and none of \\ : * ? \" < > |).");
            }
        }
        if (name.Trim() != name)
        {
            throw new BadRequestException($"The index name '{name}' starts or ends with white space.");
        }
    }

    /// <summary>
    /// The folder name of an index: letters, digits, '-' and '.' as they are (lowercased: names are
    /// case-insensitive), every other UTF-8 byte as <c>_xx</c>. Distinct names give distinct folders.
    /// </summary>
    public static string FolderName(string name)
    {
        var builder = new StringBuilder(name.Length + 8);
        foreach (var b in Encoding.UTF8.GetBytes(name.ToLowerInvariant()))
        {
            if (b is >= (byte)'a' and <= (byte)'z' or >= (byte)'0' and <= (byte)'9' or (byte)'-' or (byte)'.')
            {
                builder.Append((char)b);
            }
            else
            {
                builder.Append('_').Append(b.ToString("x2", System.Globalization.CultureInfo.InvariantCulture));
            }
        }
        var folder = builder.ToString();
        // "." and ".." are not folder names of their own.
        if (folder.Trim('.').Length == 0)
        {
            folder = "_" + folder;
        }
        // A file name has at most 255 bytes: a long name keeps its start and gets a hash of the whole.
        if (folder.Length > MaxFolderChars)
        {
            var hash = Convert.ToHexString(System.Security.Cryptography.SHA256.HashData(Encoding.UTF8.GetBytes(name.ToLowerInvariant())))[..16].ToLowerInvariant();
            folder = folder[..(MaxFolderChars - 17)] + "-" + hash;
        }
        return folder;
    }

    /// <summary>
    /// Reads a static definition from RavenDB's JSON shape (<c>Name</c>, <c>Maps</c>, <c>Fields</c>,
    /// <c>AdditionalSources</c>; for map-reduce <c>Reduce</c>, <c>OutputReduceToCollection</c>,
    /// <c>PatternForOutputReduceToCollectionReferences</c>, <c>PatternReferencesCollectionName</c>;
    /// other members ignored).
    /// </summary>
    /// <exception cref="BadRequestException">The JSON does not have that shape.</exception>
    public static IndexDefinition FromJson(JsonElement json)
    {
        if (json.ValueKind != JsonValueKind.Object)
        {
            throw new BadRequestException("Each index definition must be an object: {\"Name\":\"Orders/Totals\",\"Maps\":[\"map('Orders', o => ({ ... }))\"]}.");
        }
        var name = json.TryGetProperty("Name", out var n) && n.ValueKind == JsonValueKind.String ? n.GetString() : null;
        ValidateName(name);
        var reduce = ReduceDefinition.FromJson(name!, json);
        if (!json.TryGetProperty("Maps", out var mapsJson) || mapsJson.ValueKind != JsonValueKind.Array)
        {
            throw new BadRequestException($"Index '{name}' needs \"Maps\": an array of JavaScript maps such as \"map('Orders', o => ({{ Company: o.Company }}))\".");
        }
        var maps = new List<string>();
        foreach (var map in mapsJson.EnumerateArray())
        {
            if (map.ValueKind != JsonValueKind.String || string.IsNullOrWhiteSpace(map.GetString()))
            {
                throw new BadRequestException($"Index '{name}': every entry of \"Maps\" must be a non-empty string of JavaScript.");
            }
            maps.Add(map.GetString()!);
        }
        var fields = new Dictionary<string, IndexFieldOptions>(StringComparer.Ordinal);
        if (json.TryGetProperty("Fields", out var fieldsJson) && fieldsJson.ValueKind == JsonValueKind.Object)
        {
            foreach (var field in fieldsJson.EnumerateObject())
            {
                if (field.Value.ValueKind != JsonValueKind.Object)
                {
                    throw new BadRequestException($"Index '{name}': field '{field.Name}' must be an object such as {{\"Indexing\":\"Exact\",\"Storage\":\"Yes\"}}.");
                }
                var analyzer = ReadAnalyzer(name!, field.Name, field.Value);
                fields[field.Name] = new IndexFieldOptions(ReadIndexing(name!, field.Name, field.Value, analyzer), ReadStorage(name!, field.Name, field.Value), analyzer);
            }
        }
        var sources = new Dictionary<string, string>(StringComparer.Ordinal);
        if (json.TryGetProperty("AdditionalSources", out var sourcesJson) && sourcesJson.ValueKind == JsonValueKind.Object)
        {
            foreach (var source in sourcesJson.EnumerateObject())
            {
                if (source.Value.ValueKind != JsonValueKind.String)
                {
                    throw new BadRequestException($"Index '{name}': additional source '{source.Name}' must be a string of JavaScript, such as \"function total(o) {{ return o.Freight; }}\".");
                }
                sources[source.Name] = source.Value.GetString()!;
            }
        }
        else if (json.TryGetProperty("AdditionalSources", out sourcesJson) && sourcesJson.ValueKind != JsonValueKind.Null)
        {
            throw new BadRequestException($"Index '{name}': \"AdditionalSources\" must be an object of named scripts, such as {{\"helpers.js\":\"function total(o) {{ return o.Freight; }}\"}}.");
        }
        return reduce is null ? CreateStatic(name!, maps, fields, sources) : CreateMapReduce(name!, maps, reduce, fields, sources);
    }

    private static FieldIndexing ReadIndexing(string index, string field, JsonElement options, string? analyzer)
    {
        // As RavenDB: a field that names an analyzer and says nothing of its indexing is full text.
        if (!options.TryGetProperty("Indexing", out var value) || value.ValueKind == JsonValueKind.Null)
        {
            return analyzer is null ? FieldIndexing.Default : FieldIndexing.Search;
        }
        return value.ValueKind == JsonValueKind.String && Enum.TryParse<FieldIndexing>(value.GetString(), ignoreCase: true, out var indexing) && Enum.IsDefined(indexing)
            ? indexing
            : throw new BadRequestException($"Index '{index}': field '{field}' has Indexing {value.GetRawText()}; it must be one of Default, Exact, Search, No.");
    }

    private static string? ReadAnalyzer(string index, string field, JsonElement options)
    {
        if (!options.TryGetProperty("Analyzer", out var value) || value.ValueKind == JsonValueKind.Null)
        {
            return null;
        }
        if (value.ValueKind != JsonValueKind.String)
        {
            throw new BadRequestException($"Index '{index}': field '{field}' has Analyzer {value.GetRawText()}; it must be a string naming an analyzer, such as \"StandardAnalyzer\" or one of the database's analyzers.");
        }
        return string.IsNullOrWhiteSpace(value.GetString()) ? null : value.GetString()!.Trim();
    }

    private static bool ReadStorage(string index, string field, JsonElement options)
    {
        if (!options.TryGetProperty("Storage", out var value) || value.ValueKind == JsonValueKind.Null)
        {
            return false;
        }
        return value.ValueKind == JsonValueKind.String && value.GetString() is { } s && (s.Equals("Yes", StringComparison.OrdinalIgnoreCase) || s.Equals("No", StringComparison.OrdinalIgnoreCase))
            ? s.Equals("Yes", StringComparison.OrdinalIgnoreCase)
            : throw new BadRequestException($"Index '{index}': field '{field}' has Storage {value.GetRawText()}; it must be Yes or No.");
    }

    /// <summary>RavenDB's JSON shape, as <c>GET /indexes</c> answers and as stored.</summary>
    public JsonObject ToJson()
    {
        var fields = new JsonObject();
        if (IsAuto)
        {
            foreach (var field in AutoFields)
            {
                fields[field.Key] = new JsonObject { ["Indexing"] = field.Indexing.ToString(), ["Storage"] = "No" };
            }
        }
        else if (IsAutoMapReduce)
        {
            // Every field of a reduce result is stored in it (RavenDB: Storage Yes).
            foreach (var name in AutoFields.Select(f => f.Path).Concat(Aggregations.Select(a => a.Name)))
            {
                fields[name] = new JsonObject { ["Indexing"] = nameof(FieldIndexing.Default), ["Storage"] = "Yes" };
            }
        }
        else
        {
            foreach (var (field, options) in Fields)
            {
                var entry = new JsonObject { ["Indexing"] = options.Indexing.ToString(), ["Storage"] = options.Stored ? "Yes" : "No" };
                // Only when named: the JSON of definitions without analyzers (and their fingerprints) stays as it was.
                if (options.Analyzer is not null)
                {
                    entry["Analyzer"] = options.Analyzer;
                }
                fields[field] = entry;
            }
        }
        var json = new JsonObject
        {
            ["Name"] = Name,
            ["Type"] = TypeName,
            ["Maps"] = new JsonArray(Maps.Select(m => (JsonNode?)JsonValue.Create(m)).ToArray()),
            ["AdditionalSources"] = new JsonObject(AdditionalSources.Select(s => KeyValuePair.Create(s.Key, (JsonNode?)JsonValue.Create(s.Value)))),
            ["Fields"] = fields,
            ["Reduce"] = Reduce,
            ["SourceType"] = "Documents",
            ["LockMode"] = "Unlock",
            ["Priority"] = "Normal",
            ["CreatedAt"] = CreatedAt.ToString("o", System.Globalization.CultureInfo.InvariantCulture),
        };
        ReduceSpec?.WriteTo(json);
        if (IsAutoIndex)
        {
            json["Collection"] = Collection;
            json["AutoFields"] = new JsonArray(AutoFields.Select(f => (JsonNode?)new JsonObject { ["Path"] = f.Path, ["Indexing"] = f.Indexing.ToString() }).ToArray());
        }
        if (IsAutoMapReduce)
        {
            json["Aggregations"] = new JsonArray(Aggregations.Select(a => (JsonNode?)new JsonObject { ["Operation"] = a.Operation.ToString(), ["Path"] = a.Path }).ToArray());
        }
        return json;
    }

    /// <summary>Reads a definition stored by <see cref="ToJson"/>.</summary>
    internal static IndexDefinition FromStored(JsonElement json)
    {
        var created = json.TryGetProperty("CreatedAt", out var c) && c.TryGetDateTime(out var at) ? at.ToUniversalTime() : DateTime.UtcNow;
        if (json.GetProperty("Type").GetString() == "AutoMap")
        {
            var fields = json.GetProperty("AutoFields").EnumerateArray()
                .Select(f => new AutoIndexField(f.GetProperty("Path").GetString()!, Enum.Parse<FieldIndexing>(f.GetProperty("Indexing").GetString()!)))
                .ToArray();
            var auto = CreateAuto(json.GetProperty("Collection").GetString()!, fields);
            return new IndexDefinition(auto.Name, IndexType.AutoMap, [], auto.Fields, auto.Collection, auto.AutoFields, created);
        }
        if (json.GetProperty("Type").GetString() == "AutoMapReduce")
        {
            var groupBy = json.GetProperty("AutoFields").EnumerateArray().Select(f => f.GetProperty("Path").GetString()!);
            var aggregations = json.GetProperty("Aggregations").EnumerateArray()
                .Select(a => new AutoAggregationField(Enum.Parse<AggregationOperation>(a.GetProperty("Operation").GetString()!), a.GetProperty("Path").GetString()!));
            var auto = CreateAutoMapReduce(json.GetProperty("Collection").GetString()!, groupBy, aggregations);
            return new IndexDefinition(auto.Name, IndexType.AutoMapReduce, [], auto.Fields, auto.Collection, auto.AutoFields, created, aggregations: auto.Aggregations);
        }
        var definition = FromJson(json);
        return new IndexDefinition(definition.Name, definition.Type, definition.Maps, definition.Fields, null, [], created, definition.AdditionalSources, definition.ReduceSpec);
    }

    /// <summary>RavenDB's name of the type (<c>GET /indexes</c>, stats): <c>AutoMap</c>, <c>JavaScriptMap</c>, <c>AutoMapReduce</c>, <c>JavaScriptMapReduce</c>.</summary>
    public string TypeName => Type switch
    {
        IndexType.AutoMap => "AutoMap",
        IndexType.AutoMapReduce => "AutoMapReduce",
        IndexType.MapReduce => "JavaScriptMapReduce",
        _ => "JavaScriptMap",
    };
}
