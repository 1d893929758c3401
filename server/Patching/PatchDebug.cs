using System.Text.Json;

namespace Jackdaw.Server.Patching;

/// <summary>
/// What a script said and did, for a debug or test run (RavenDB's <c>Debug</c> object of a
/// <c>PatchResult</c>): <c>{"Info":[output lines],"Actions":{"LoadDocument":[...],"PutDocument":[...],"DeleteDocument":[...]}}</c>.
/// </summary>
internal sealed class PatchDebug
{
    public List<string> Info { get; } = [];

    public List<string> Loaded { get; } = [];

    public List<string> Put { get; } = [];

    public List<string> Deleted { get; } = [];

    public string ToJson()
    {
        using var stream = new MemoryStream();
        using (var writer = new Utf8JsonWriter(stream))
        {
            writer.WriteStartObject();
            WriteList(writer, "Info", Info);
            writer.WriteStartObject("Actions");
            WriteList(writer, "LoadDocument", Loaded);
            WriteList(writer, "PutDocument", Put);
            WriteList(writer, "DeleteDocument", Deleted);
            writer.WriteEndObject();
            writer.WriteEndObject();
        }
        return System.Text.Encoding.UTF8.GetString(stream.ToArray());
    }

    private static void WriteList(Utf8JsonWriter writer, string name, List<string> values)
    {
        writer.WriteStartArray(name);
        foreach (var value in values)
        {
            writer.WriteStringValue(value);
        }
        writer.WriteEndArray();
    }
}
