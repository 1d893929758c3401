using System.Globalization;
using System.Text.Json;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Documents;

/// <summary>
/// How revisions are kept for one collection (or by default), in RavenDB's names:
/// <c>{"Disabled":false,"MinimumRevisionsToKeep":10,"MinimumRevisionAgeToKeep":"7.00:00:00",
/// "PurgeOnDelete":false,"MaximumRevisionsToDeleteUponDocumentUpdate":null}</c>.
/// </summary>
/// <remarks>
/// The policy, as RavenDB applies it on every put of a document of the collection: when
/// <see cref="MinimumRevisionsToKeep"/> is set, the oldest revisions beyond that many go; when
/// <see cref="MinimumRevisionAgeToKeep"/> is set, only revisions older than that go (with both set,
/// a revision goes when it is beyond the count and old enough); at most
/// <see cref="MaximumRevisionsToDeleteUponDocumentUpdate"/> per put, the rest on later puts.
/// </remarks>
public sealed record RevisionsCollectionConfiguration(
    bool Disabled,
    long? MinimumRevisionsToKeep,
    TimeSpan? MinimumRevisionAgeToKeep,
    bool PurgeOnDelete,
    long? MaximumRevisionsToDeleteUponDocumentUpdate)
{
    /// <summary>Whether the policy removes anything at all (a put may skip looking).</summary>
    public bool Limits => MinimumRevisionsToKeep is not null || MinimumRevisionAgeToKeep is not null;

    /// <summary>Reads one configuration object; <paramref name="where"/> names it in errors.</summary>
    /// <exception cref="BadRequestException">A value has the wrong type or is out of range.</exception>
    public static RevisionsCollectionConfiguration Parse(JsonElement json, string where)
    {
        if (json.ValueKind != JsonValueKind.Object)
        {
            throw new BadRequestException($"{where} must be a JSON object like {{\"Disabled\":false,\"MinimumRevisionsToKeep\":10}}, not {json.ValueKind}.");
        }
        var disabled = false;
        var purgeOnDelete = false;
        long? minimumToKeep = null;
        long? maximumToDelete = null;
        TimeSpan? minimumAge = null;
        foreach (var property in json.EnumerateObject())
        {
            var value = property.Value;
            switch (property.Name)
            {
                case "Disabled":
                    disabled = Boolean(value, where, property.Name);
                    break;
                case "PurgeOnDelete":
                    purgeOnDelete = Boolean(value, where, property.Name);
                    break;
                case "MinimumRevisionsToKeep":
                    minimumToKeep = Count(value, where, property.Name, min: 0);
                    break;
                case "MaximumRevisionsToDeleteUponDocumentUpdate":
                    maximumToDelete = Count(value, where, property.Name, min: 1);
                    break;
                case "MinimumRevisionAgeToKeep":
                    minimumAge = Age(value, where);
                    break;
            }
        }
        return new RevisionsCollectionConfiguration(disabled, minimumToKeep, minimumAge, purgeOnDelete, maximumToDelete);
    }

    /// <summary>
    /// The conflict revisions configuration (one collection configuration, RavenDB's
    /// <c>ConfigureRevisionsForConflictsOperation</c> body) checked and written as stored.
    /// </summary>
    /// <exception cref="BadRequestException">The JSON is not such a configuration.</exception>
    public static byte[] NormalizeConflictsConfiguration(ReadOnlySpan<byte> utf8Json)
    {
        const string What = "The conflict revisions configuration";
        JsonDocument document;
        try
        {
            document = JsonDocument.Parse(utf8Json.ToArray());
        }
        catch (JsonException e)
        {
            throw new BadRequestException($"{What} is not valid JSON ({e.Message}); send e.g. {{\"Disabled\":false,\"MinimumRevisionsToKeep\":5}}.", e);
        }
        using (document)
        {
            var configuration = Parse(document.RootElement, What);
            using var buffer = new MemoryStream();
            using (var json = new Utf8JsonWriter(buffer))
            {
                configuration.WriteTo(json);
            }
            return buffer.ToArray();
        }
    }

    /// <summary>Writes it as RavenDB does (every property, nulls included).</summary>
    public void WriteTo(Utf8JsonWriter json)
    {
        json.WriteStartObject();
        json.WriteBoolean("Disabled", Disabled);
        WriteNullable(json, "MinimumRevisionsToKeep", MinimumRevisionsToKeep);
        if (MinimumRevisionAgeToKeep is { } age)
        {
            json.WriteString("MinimumRevisionAgeToKeep", age.ToString("c", CultureInfo.InvariantCulture));
        }
        else
        {
            json.WriteNull("MinimumRevisionAgeToKeep");
        }
        json.WriteBoolean("PurgeOnDelete", PurgeOnDelete);
        WriteNullable(json, "MaximumRevisionsToDeleteUponDocumentUpdate", MaximumRevisionsToDeleteUponDocumentUpdate);
        json.WriteEndObject();
    }

    private static void WriteNullable(Utf8JsonWriter json, string name, long? value)
    {
        if (value is { } number)
        {
            json.WriteNumber(name, number);
        }
        else
        {
            json.WriteNull(name);
        }
    }

    private static bool Boolean(JsonElement value, string where, string name) => value.ValueKind switch
    {
        JsonValueKind.True => true,
        JsonValueKind.False or JsonValueKind.Null => false,
        _ => throw new BadRequestException($"{where}.{name} must be true or false, not {value.GetRawText()}."),
    };

    private static long? Count(JsonElement value, string where, string name, long min)
    {
        if (value.ValueKind == JsonValueKind.Null)
        {
            return null;
        }
        if (value.ValueKind != JsonValueKind.Number || !value.TryGetInt64(out var number) || number < min)
        {
            throw new BadRequestException($"{where}.{name} must be a whole number of at least {min}, or null for no limit; it is {value.GetRawText()}.");
        }
        return number;
    }

    private static TimeSpan? Age(JsonElement value, string where)
    {
        if (value.ValueKind == JsonValueKind.Null)
        {
            return null;
        }
        if (value.ValueKind != JsonValueKind.String
            || !TimeSpan.TryParse(value.GetString(), CultureInfo.InvariantCulture, out var age)
            || age < TimeSpan.Zero)
        {
            throw new BadRequestException($"{where}.MinimumRevisionAgeToKeep must be a TimeSpan string such as \"7.00:00:00\" (days.hours:minutes:seconds), zero or more, or null for no age limit; it is {value.GetRawText()}.");
        }
        return age;
    }
}
