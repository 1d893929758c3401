using System.Net;
using System.Text.Json.Nodes;

namespace Jackdaw.Client.Tests.Infrastructure;

// The index routes of the fake: definitions, lock modes, priorities, disabled and stopped indexing,
// as the real server answers them. A changed definition takes effect at once here (the real server
// builds it side by side first); tests of replacements, errors, performance, cleanup and test runs
// answer through Intercept.
public sealed partial class FakeJackdaw
{
    private readonly Dictionary<string, Dictionary<string, FakeIndex>> _indexes = new(StringComparer.OrdinalIgnoreCase);
    private readonly HashSet<string> _indexingStopped = new(StringComparer.OrdinalIgnoreCase);

    /// <summary>The fake's record of an index, by database and name; null if it has none.</summary>
    public FakeIndex? Index(string database, string name)
    {
        lock (_lock)
            return _indexes.GetValueOrDefault(database)?.GetValueOrDefault(name);
    }

    public bool IndexingStopped(string database)
    {
        lock (_lock)
            return _indexingStopped.Contains(database);
    }

    /// <summary>The route under <c>/databases/{db}/indexes</c> or <c>/databases/{db}/admin/indexes</c> ("" for the collection itself), or null.</summary>
    private static string? IndexRoute(string[] segments)
    {
        if (segments.Length < 3 || segments[0] != "databases")
        {
            return null;
        }
        if (segments[2] == "indexes")
        {
            return string.Join('/', segments.Skip(3));
        }
        if (segments.Length >= 4 && segments[2] == "admin" && segments[3] == "indexes")
        {
            return string.Join('/', segments.Skip(4));
        }
        return null;
    }

    private HttpResponseMessage Indexes(string method, string database, string route, Dictionary<string, List<string>> query, string? body)
    {
        var name = query.GetValueOrDefault("name")?.FirstOrDefault();
        lock (_lock)
        {
            if (!_databases.ContainsKey(database))
            {
                return Error(HttpStatusCode.ServiceUnavailable, "DatabaseDoesNotExistException", $"Database '{database}' does not exist.");
            }
            if (!_indexes.TryGetValue(database, out var indexes))
            {
                _indexes[database] = indexes = new(StringComparer.OrdinalIgnoreCase);
            }

            switch (method, route)
            {
                case ("PUT", ""):
                    return PutIndexes(indexes, body!);
                case ("GET", ""):
                    return Json(HttpStatusCode.OK, new JsonObject { ["Results"] = new JsonArray([.. indexes.Values.Select(i => (JsonNode)i.DefinitionJson())]) });
                case ("GET", "stats"):
                    return Json(HttpStatusCode.OK, new JsonObject { ["Results"] = new JsonArray([.. indexes.Values.Select(i => (JsonNode)i.StatsJson(_indexingStopped.Contains(database)))]) });
                case ("GET", "errors" or "performance"):
                    var listed = query.GetValueOrDefault("name") ?? [.. indexes.Keys];
                    if (listed.FirstOrDefault(n => !indexes.ContainsKey(n)) is { } missing)
                    {
                        return NoIndex(missing);
                    }
                    return Json(HttpStatusCode.OK, new JsonObject
                    {
                        ["Results"] = new JsonArray([.. listed.Select(n => (JsonNode)new JsonObject { ["Name"] = indexes[n].Name, [route == "errors" ? "Errors" : "Performance"] = new JsonArray() })]),
                    });
                case ("DELETE" or "RESET", ""):
                    return name is not null && (method == "RESET" ? indexes.ContainsKey(name) : indexes.Remove(name)) ? new HttpResponseMessage(HttpStatusCode.NoContent) : NoIndex(name);
                case ("POST", "set-lock" or "set-priority"):
                    return SetIndexSettings(indexes, route, body!);
                case ("POST", "disable" or "enable"):
                    if (name is null || !indexes.TryGetValue(name, out var index))
                    {
                        return NoIndex(name);
                    }
                    index.Disabled = route == "disable";
                    return new HttpResponseMessage(HttpStatusCode.NoContent);
                case ("POST", "stop"):
                    _indexingStopped.Add(database);
                    return new HttpResponseMessage(HttpStatusCode.NoContent);
                case ("POST", "start"):
                    _indexingStopped.Remove(database);
                    return new HttpResponseMessage(HttpStatusCode.NoContent);
                case ("POST", "replace"):
                    return NoIndex("ReplacementOf/" + name);
                case ("GET", "cleanup"):
                    return Json(HttpStatusCode.OK, new JsonObject { ["Results"] = new JsonArray() });
                default:
                    return Error(HttpStatusCode.NotFound, "RouteNotFoundException", $"No route matches '{method} indexes/{route}'.");
            }
        }
    }

    private static HttpResponseMessage PutIndexes(Dictionary<string, FakeIndex> indexes, string body)
    {
        var definitions = JsonNode.Parse(body)!["Indexes"]!.AsArray().Select(d => d!.AsObject()).ToList();
        foreach (var definition in definitions)
        {
            if (indexes.TryGetValue((string)definition["Name"]!, out var existing) && existing.LockMode == "LockedError" && !existing.SameAs(definition))
            {
                return Error(HttpStatusCode.Conflict, "IndexLockedException", $"Index '{existing.Name}' is locked (LockedError): its definition cannot change.");
            }
        }

        var results = new JsonArray();
        foreach (var definition in definitions)
        {
            var name = (string)definition["Name"]!;
            if (!indexes.TryGetValue(name, out var existing))
            {
                indexes[name] = new FakeIndex(name, definition);
            }
            else if (!existing.SameAs(definition) && existing.LockMode != "LockedIgnore")
            {
                existing.Definition = (JsonObject)definition.DeepClone();
            }
            results.Add(new JsonObject { ["Index"] = name, ["RaftCommandIndex"] = 1 });
        }

        return Json(HttpStatusCode.Created, new JsonObject { ["Results"] = results });
    }

    private static HttpResponseMessage SetIndexSettings(Dictionary<string, FakeIndex> indexes, string route, string body)
    {
        var json = JsonNode.Parse(body)!;
        var valueName = route == "set-lock" ? "Mode" : "Priority";
        var allowed = route == "set-lock" ? new[] { "Unlock", "LockedIgnore", "LockedError" } : ["Low", "Normal", "High"];
        var value = (string?)json[valueName];
        if (json["IndexNames"] is not JsonArray names || !allowed.Contains(value))
        {
            return Error(HttpStatusCode.BadRequest, "BadRequestException", $"The body must be {{\"IndexNames\":[...],\"{valueName}\":...}}.");
        }
        foreach (var name in names.Select(n => (string)n!))
        {
            if (!indexes.TryGetValue(name, out var index))
            {
                return NoIndex(name);
            }
            if (route == "set-lock")
            {
                index.LockMode = value!;
            }
            else
            {
                index.Priority = value!;
            }
        }

        return new HttpResponseMessage(HttpStatusCode.NoContent);
    }

    private static HttpResponseMessage NoIndex(string? name) =>
        Error(HttpStatusCode.NotFound, "IndexDoesNotExistException", $"There is no index named '{name}' in this database.");

    public sealed class FakeIndex(string name, JsonObject definition)
    {
        public string Name { get; } = name;

        public JsonObject Definition { get; set; } = (JsonObject)definition.DeepClone();

        public string LockMode { get; set; } = "Unlock";

        public string Priority { get; set; } = "Normal";

        public bool Disabled { get; set; }

        public bool SameAs(JsonObject other) =>
            JsonNode.DeepEquals(Definition["Maps"], other["Maps"]) && JsonNode.DeepEquals(Definition["Fields"] ?? new JsonObject(), other["Fields"] ?? new JsonObject());

        public JsonObject DefinitionJson()
        {
            var json = (JsonObject)Definition.DeepClone();
            json["Type"] = "JavaScriptMap";
            json["LockMode"] = LockMode;
            json["Priority"] = Priority;
            return json;
        }

        public JsonObject StatsJson(bool stopped) => new()
        {
            ["Name"] = Name,
            ["Type"] = "Map",
            ["State"] = Disabled ? "Disabled" : "Normal",
            ["Status"] = stopped ? "Paused" : Disabled ? "Disabled" : "Running",
            ["LockMode"] = LockMode,
            ["Priority"] = Priority,
            ["EntriesCount"] = 0,
            ["MapAttempts"] = 0,
            ["MapErrors"] = 0,
            ["LastIndexedEtag"] = 0,
            ["IsStale"] = false,
        };
    }
}
