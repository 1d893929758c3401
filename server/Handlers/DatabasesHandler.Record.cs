using System.Text.Json;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

// RavenDB's database record as far as Jackdaw keeps one: its name, topology (members, promotables
// with their mentors) and settings.
public sealed partial class DatabasesHandler
{
    /// <summary>
    /// <c>GET /admin/databases?name=</c> (RavenDB's GetDatabaseRecordOperation): <c>{"DatabaseName",
    /// "Disabled","Encrypted","Topology":{...},"Settings","Etag"}</c>; the topology as
    /// <see cref="WriteTopology"/> writes it. 404 when the database does not exist.
    /// </summary>
    private ValueTask WriteDatabaseRecordAsync(RequestContext context, string name)
    {
        var cluster = Server.Cluster;
        IReadOnlyList<string> nodes;
        IReadOnlyDictionary<string, string>? promotables = null;
        IReadOnlyDictionary<string, string>? rehabs = null;
        IReadOnlyDictionary<string, string> settings = new Dictionary<string, string>();
        long etag;
        if (cluster.IsClustered)
        {
            if (!cluster.State.Databases.TryGetValue(name, out var record))
            {
                return NotFound(context);
            }
            (name, nodes, promotables, rehabs, settings, etag) = (record.Name, record.Nodes, record.Promotables, record.Rehabs, record.Settings, record.TopologyEtag);
        }
        else
        {
            if (Server.Databases.Names.FirstOrDefault(n => string.Equals(n, name, StringComparison.OrdinalIgnoreCase)) is not { } local)
            {
                return NotFound(context);
            }
            (name, nodes, etag) = (local, [cluster.NodeTag], 1);
        }
        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteString("DatabaseName", name);
        json.WriteBoolean("Disabled", false);
        json.WriteBoolean("Encrypted", false);
        WriteTopology(json, nodes, promotables, rehabs);
        json.WriteStartObject("Settings");
        foreach (var (key, value) in settings)
        {
            json.WriteString(key, value);
        }
        json.WriteEndObject();
        json.WriteNumber("Etag", etag);
        json.WriteEndObject();
        return context.CompleteJsonAsync();
    }

    /// <summary>RavenDB answers a record it does not have with an empty 404 (its client reads it as null).</summary>
    private static ValueTask NotFound(RequestContext context)
    {
        context.Response.StatusCode = StatusCodes.Status404NotFound;
        context.Response.ContentLength = 0;
        return ValueTask.CompletedTask;
    }

    /// <summary>
    /// RavenDB's <c>DatabaseTopology</c>: <c>Members</c> (the nodes clients use), <c>Promotables</c>
    /// (added, catching up), <c>Rehabs</c> (demoted, catching up again), <c>PredefinedMentors</c>
    /// (the mentor of each), <c>DemotionReasons</c> and <c>PromotablesStatus</c>, <c>ReplicationFactor</c>.
    /// </summary>
    private static void WriteTopology(Utf8JsonWriter json, IReadOnlyList<string> nodes, IReadOnlyDictionary<string, string>? promotables, IReadOnlyDictionary<string, string>? rehabs = null)
    {
        promotables ??= new Dictionary<string, string>();
        rehabs ??= new Dictionary<string, string>();
        json.WriteStartObject("Topology");
        WriteTags(json, "Members", nodes.Where(n => !promotables.ContainsKey(n) && !rehabs.ContainsKey(n)));
        WriteTags(json, "Promotables", nodes.Where(promotables.ContainsKey));
        WriteTags(json, "Rehabs", nodes.Where(rehabs.ContainsKey));
        json.WriteStartObject("PredefinedMentors");
        foreach (var (node, mentor) in promotables.Concat(rehabs))
        {
            json.WriteString(node, mentor);
        }
        json.WriteEndObject();
        json.WriteStartObject("DemotionReasons");
        foreach (var node in promotables.Keys)
        {
            json.WriteString(node, "Just added");
        }
        foreach (var node in rehabs.Keys)
        {
            json.WriteString(node, "Not responding");
        }
        json.WriteEndObject();
        json.WriteStartObject("PromotablesStatus");
        foreach (var node in promotables.Keys)
        {
            json.WriteString(node, "WaitingForFirstPromotion");
        }
        foreach (var node in rehabs.Keys)
        {
            json.WriteString(node, "NotResponding");
        }
        json.WriteEndObject();
        json.WriteNumber("ReplicationFactor", nodes.Count);
        json.WriteBoolean("DynamicNodesDistribution", false);
        json.WriteEndObject();
    }

    private static void WriteTags(Utf8JsonWriter json, string name, IEnumerable<string> tags)
    {
        json.WriteStartArray(name);
        foreach (var tag in tags)
        {
            json.WriteStringValue(tag);
        }
        json.WriteEndArray();
    }
}
