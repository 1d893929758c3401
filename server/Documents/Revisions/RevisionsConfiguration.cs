using System.Text;
using System.Text.Json;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Documents;

/// <summary>
/// A database's revisions configuration as RavenDB's <c>ConfigureRevisionsOperation</c> sends it:
/// <c>{"Default":{...},"Collections":{"Orders":{...}}}</c> (see <see cref="RevisionsCollectionConfiguration"/>).
/// Stored in <c>Meta</c> as that JSON, read once when the database opens and cached on it;
/// immutable, so a transaction holds the one it began with.
/// </summary>
public sealed class RevisionsConfiguration
{
    /// <summary>No configuration: no collection keeps revisions (ForceRevisionCreation still works).</summary>
    public static RevisionsConfiguration None { get; } = new(null, new Dictionary<string, RevisionsCollectionConfiguration>(StringComparer.OrdinalIgnoreCase), []);

    private readonly Dictionary<string, RevisionsCollectionConfiguration> _collections;

    private RevisionsConfiguration(RevisionsCollectionConfiguration? defaultConfiguration, Dictionary<string, RevisionsCollectionConfiguration> collections, byte[] json)
    {
        Default = defaultConfiguration;
        _collections = collections;
        Json = json;
        AnyEnabled = (defaultConfiguration is { Disabled: false }) || collections.Values.Any(c => !c.Disabled);
    }

    public RevisionsCollectionConfiguration? Default { get; }

    /// <summary>The collection configurations, by name as sent (looked up ignoring case).</summary>
    public IReadOnlyDictionary<string, RevisionsCollectionConfiguration> Collections => _collections;

    /// <summary>The configuration as stored and answered (UTF-8 JSON); empty for <see cref="None"/>.</summary>
    public byte[] Json { get; }

    /// <summary>Whether any collection keeps revisions: when not, a put of a document that has none skips revisions entirely.</summary>
    public bool AnyEnabled { get; }

    /// <summary>
    /// The configuration that applies to a collection (null: documents without one): its own, else
    /// the default; null when neither exists. The HiLo documents (<c>@hilo</c>) take no default,
    /// as in RavenDB: they change on every range a client takes.
    /// </summary>
    public RevisionsCollectionConfiguration? For(string? collection)
    {
        if (collection is not null && _collections.TryGetValue(collection, out var own))
        {
            return own;
        }
        if (collection is not null && collection.Equals("@hilo", StringComparison.OrdinalIgnoreCase))
        {
            return null;
        }
        return Default;
    }

    /// <summary>Whether a put or delete of a document of <paramref name="collection"/> stores a revision.</summary>
    public bool IsEnabled(string? collection) => AnyEnabled && For(collection) is { Disabled: false };

    /// <summary>Reads a configuration from a request body or from <c>Meta</c>.</summary>
    /// <exception cref="BadRequestException">The JSON is not a revisions configuration.</exception>
    public static RevisionsConfiguration Parse(ReadOnlySpan<byte> utf8Json)
    {
        JsonDocument document;
        try
        {
            document = JsonDocument.Parse(utf8Json.ToArray());
        }
        catch (JsonException e)
        {
            throw new BadRequestException("The revisions configuration is not valid JSON: " + e.Message, e);
        }
        using (document)
        {
            var root = document.RootElement;
            if (root.ValueKind != JsonValueKind.Object)
            {
                throw new BadRequestException("The revisions configuration must be a JSON object {\"Default\":{...},\"Collections\":{\"Orders\":{...}}}.");
            }
            RevisionsCollectionConfiguration? defaultConfiguration = null;
            var collections = new Dictionary<string, RevisionsCollectionConfiguration>(StringComparer.OrdinalIgnoreCase);
            if (root.TryGetProperty("Default", out var defaultJson) && defaultJson.ValueKind != JsonValueKind.Null)
            {
                defaultConfiguration = RevisionsCollectionConfiguration.Parse(defaultJson, "Default");
            }
            if (root.TryGetProperty("Collections", out var collectionsJson) && collectionsJson.ValueKind != JsonValueKind.Null)
            {
                if (collectionsJson.ValueKind != JsonValueKind.Object)
                {
                    throw new BadRequestException("The revisions configuration's 'Collections' must be an object of collection name to configuration, e.g. {\"Orders\":{\"MinimumRevisionsToKeep\":5}}.");
                }
                foreach (var collection in collectionsJson.EnumerateObject())
                {
                    if (collection.Name.Length == 0 || Encoding.UTF8.GetByteCount(collection.Name.ToLowerInvariant()) > StorageKeys.MaxCollectionBytes)
                    {
                        throw new BadRequestException($"The revisions configuration names a collection of {Encoding.UTF8.GetByteCount(collection.Name)} bytes; a collection name is 1 to {StorageKeys.MaxCollectionBytes} bytes of UTF-8.");
                    }
                    if (collection.Value.ValueKind == JsonValueKind.Null)
                    {
                        continue;
                    }
                    if (!collections.TryAdd(collection.Name, RevisionsCollectionConfiguration.Parse(collection.Value, $"Collections['{collection.Name}']")))
                    {
                        throw new BadRequestException($"The revisions configuration names the collection '{collection.Name}' twice (collection names ignore case).");
                    }
                }
            }
            return new RevisionsConfiguration(defaultConfiguration, collections, Serialize(defaultConfiguration, collections));
        }
    }

    private static byte[] Serialize(RevisionsCollectionConfiguration? defaultConfiguration, Dictionary<string, RevisionsCollectionConfiguration> collections)
    {
        using var buffer = new MemoryStream();
        using (var json = new Utf8JsonWriter(buffer))
        {
            json.WriteStartObject();
            json.WritePropertyName("Default");
            if (defaultConfiguration is null)
            {
                json.WriteNullValue();
            }
            else
            {
                defaultConfiguration.WriteTo(json);
            }
            json.WriteStartObject("Collections");
            foreach (var (name, configuration) in collections)
            {
                json.WritePropertyName(name);
                configuration.WriteTo(json);
            }
            json.WriteEndObject();
            json.WriteEndObject();
        }
        return buffer.ToArray();
    }
}
