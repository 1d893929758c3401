using System.Globalization;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Backup.Smuggler;

/// <summary>What export and import both ask of a document.</summary>
internal static class SmugglerDocuments
{
    /// <summary>Whether <c>@metadata.@expires</c> is a time at or before <paramref name="now"/> (RavenDB's expiration; <c>IncludeExpired: false</c> leaves such documents out).</summary>
    public static bool Expired(ReadOnlySpan<byte> document, DateTime now)
    {
        var root = BlittableReader.Open(document);
        if (!root.TryGet("@metadata"u8, out var metadata) || metadata.Type != BlittableToken.Object)
        {
            return false;
        }
        if (!metadata.GetObject().TryGet("@expires"u8, out var expires) || expires.Type != BlittableToken.String)
        {
            return false;
        }
        return DateTime.TryParse(expires.GetString(), CultureInfo.InvariantCulture, DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal, out var at) && at <= now;
    }
}
