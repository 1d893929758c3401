using System.Text.Json;
using System.Text.Json.Nodes;
using Jackdaw.Client.Json;
using Jackdaw.Client.Queries.Linq;

namespace Jackdaw.Client.Queries;

/// <summary>Reads one projected result (<c>{"Company":...,"City":...,"@metadata":{"@id":...}}</c>) into the projection's type.</summary>
internal static class ProjectionReader
{
    public static TResult Read<TResult>(ReadOnlyMemory<byte> result, Projection projection, JsonSerializerOptions options)
    {
        try
        {
            if (projection.SingleIsId)
            {
                return (TResult)(object)(IdOf(result.Span) ?? throw new JackdawException("A query result came without @metadata.@id, so its id cannot be projected."));
            }

            if (projection.SingleField is { } name)
            {
                using var document = JsonDocument.Parse(result);
                return document.RootElement.TryGetProperty(name, out var value) ? value.Deserialize<TResult>(options)! : default!;
            }

            if (projection.IdAlias is { } alias)
            {
                var node = JsonNode.Parse(result.Span)!.AsObject();
                node[alias] = IdOf(result.Span);
                return node.Deserialize<TResult>(options)!;
            }

            return JsonSerializer.Deserialize<TResult>(result.Span, options)!;
        }
        catch (JsonException e)
        {
            throw new JackdawException($"A query result cannot be read as a {typeof(TResult).Name}: {e.Message}", e);
        }
    }

    public static string? IdOf(ReadOnlySpan<byte> result) =>
        LoadedMetadataReader.TryRead(result, "", default, out var metadata) ? metadata.Id : null;
}
