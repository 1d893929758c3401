using System.Text.Json;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>
/// Reads RavenDB's smuggler options (the JSON body of <c>smuggler/export</c>, the
/// <c>importOptions</c> part of <c>smuggler/import</c>), PascalCase as its clients send them:
/// <code>
/// {"OperateOnTypes":"Indexes,Documents,..."|["Indexes",...],"IncludeExpired":true,"RemoveAnalyzers":false,
///  "Collections":["Orders"],"CompressionAlgorithm":"Gzip"|null, ...}
/// </code>
/// Honoured: <c>OperateOnTypes</c>, <c>IncludeExpired</c>, <c>RemoveAnalyzers</c>, <c>Collections</c>.
/// Refused with a 400 when set, since doing nothing would lose what they ask: a
/// <c>TransformScript</c>, an <c>EncryptionKey</c>, <c>CompressionAlgorithm</c> <c>Zstd</c>.
/// Everything else (<c>OperateOnDatabaseRecordType</c>, <c>IncludeArtificial</c>,
/// <c>IncludeArchived</c>, <c>SkipRevisionCreation</c>, <c>MaxStepsForTransformScript</c>,
/// <c>MaxReadOpsPerSecond</c>, <c>SkipCorruptedData</c>, <c>CompressionLevel</c>, <c>FileName</c>)
/// is read past: it concerns data Jackdaw does not have.
/// </summary>
public static class SmugglerOptionsJson
{
    public static SmugglerExportOptions ReadExport(JsonElement? json)
    {
        var options = new SmugglerExportOptions();
        if (json is { } root)
        {
            Read(root, options, export: true);
        }
        return options;
    }

    public static SmugglerImportOptions ReadImport(JsonElement? json)
    {
        var options = new SmugglerImportOptions();
        if (json is { } root)
        {
            Read(root, options, export: false);
        }
        return options;
    }

    /// <summary>The <c>OperateOnTypes</c> value: names joined by commas (RavenDB's flags), or an array of names.</summary>
    /// <exception cref="BadRequestException">A name RavenDB does not have.</exception>
    public static DatabaseItemType ParseTypes(JsonElement value)
    {
        var names = value.ValueKind switch
        {
            JsonValueKind.String => value.GetString()!.Split(',', StringSplitOptions.TrimEntries | StringSplitOptions.RemoveEmptyEntries),
            JsonValueKind.Array => value.EnumerateArray().Select(e => e.ValueKind == JsonValueKind.String ? e.GetString()! : throw TypesError(e.GetRawText())).ToArray(),
            _ => throw TypesError(value.GetRawText()),
        };
        var types = DatabaseItemType.None;
        foreach (var name in names)
        {
            if (!Enum.TryParse<DatabaseItemType>(name, ignoreCase: true, out var type) || !Enum.IsDefined(type) || int.TryParse(name, out _))
            {
                throw TypesError($"'{name}'");
            }
            types |= type;
        }
        return types;
    }

    private static BadRequestException TypesError(string value) =>
        new($"OperateOnTypes has {value}; it is RavenDB's item types joined by commas, such as \"Documents,Indexes,Subscriptions,Tombstones\" (any of {string.Join(", ", Enum.GetNames<DatabaseItemType>())}).");

    private static void Read(JsonElement root, SmugglerOptions options, bool export)
    {
        if (root.ValueKind == JsonValueKind.Null)
        {
            return;
        }
        if (root.ValueKind != JsonValueKind.Object)
        {
            throw new BadRequestException("The smuggler options must be a JSON object, such as {\"OperateOnTypes\":\"Documents,Indexes\",\"Collections\":[\"Orders\"]}.");
        }
        foreach (var property in root.EnumerateObject())
        {
            var value = property.Value;
            switch (property.Name)
            {
                case "OperateOnTypes" when value.ValueKind != JsonValueKind.Null:
                    options.OperateOnTypes = ParseTypes(value);
                    break;
                case "IncludeExpired" when value.ValueKind != JsonValueKind.Null:
                    options.IncludeExpired = Boolean(property);
                    break;
                case "RemoveAnalyzers" when value.ValueKind != JsonValueKind.Null:
                    options.RemoveAnalyzers = Boolean(property);
                    break;
                case "Collections" when value.ValueKind == JsonValueKind.Array:
                    options.Collections = value.EnumerateArray()
                        .Select(c => c.ValueKind == JsonValueKind.String && !string.IsNullOrWhiteSpace(c.GetString())
                            ? c.GetString()!
                            : throw new BadRequestException($"Collections has {c.GetRawText()}; it is an array of collection names, such as [\"Orders\",\"Companies\"]."))
                        .ToList();
                    break;
                case "Collections" when value.ValueKind != JsonValueKind.Null:
                    throw new BadRequestException("Collections must be an array of collection names, such as [\"Orders\",\"Companies\"].");
                case "TransformScript" when value.ValueKind == JsonValueKind.String && !string.IsNullOrWhiteSpace(value.GetString()):
                    throw new BadRequestException("TransformScript is not supported: Jackdaw exports and imports documents as they are. Leave it empty.");
                case "EncryptionKey" when value.ValueKind == JsonValueKind.String && !string.IsNullOrWhiteSpace(value.GetString()):
                    throw new BadRequestException("EncryptionKey is not supported: Jackdaw's dumps are gzipped JSON, not encrypted. Leave it empty.");
                case "CompressionAlgorithm" when value.ValueKind == JsonValueKind.String && export
                                                 && !string.Equals(value.GetString(), "Gzip", StringComparison.OrdinalIgnoreCase):
                    throw new BadRequestException($"CompressionAlgorithm '{value.GetString()}' is not supported: Jackdaw writes gzip dumps. Leave it unset or send \"Gzip\".");
            }
        }
    }

    private static bool Boolean(JsonProperty property) => property.Value.ValueKind switch
    {
        JsonValueKind.True => true,
        JsonValueKind.False => false,
        _ => throw new BadRequestException($"{property.Name} has {property.Value.GetRawText()}; it is true or false."),
    };
}
