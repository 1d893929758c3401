using System.Text.Json;

namespace Jackdaw.Client;

// The identities of one database (ids ending in '|': users| is stored as users/1, users/2, ...),
// with RavenDB's routes and answers.
public sealed partial class MaintenanceOperations
{
    /// <summary>Takes the next value of the identity <paramref name="name"/> (<c>users</c>), as storing <c>users|</c> would; returns it.</summary>
    public async Task<long> NextIdentityForAsync(string name, CancellationToken token = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        return await ReadNumberAsync(HttpMethod.Post, IndexesPath("/identity/next?name=" + Uri.EscapeDataString(name)), "NewIdentityValue", token).ConfigureAwait(false);
    }

    /// <summary>
    /// Raises the identity <paramref name="name"/> to <paramref name="value"/> (the next id is then
    /// <c>value + 1</c>); a lower value leaves it unless <paramref name="force"/>. Returns where it is afterwards.
    /// </summary>
    public async Task<long> SeedIdentityForAsync(string name, long value, bool force = false, CancellationToken token = default)
    {
        ArgumentException.ThrowIfNullOrEmpty(name);
        var path = "/identity/seed?name=" + Uri.EscapeDataString(name) + "&value=" + value.ToString(System.Globalization.CultureInfo.InvariantCulture) + (force ? "&force=true" : "");
        return await ReadNumberAsync(HttpMethod.Post, IndexesPath(path), "NewSeedValue", token).ConfigureAwait(false);
    }

    /// <summary>Every identity of the database and its last value, keyed as RavenDB keys them (<c>users|</c>, lowercased).</summary>
    public async Task<Dictionary<string, long>> GetIdentitiesAsync(CancellationToken token = default)
    {
        using var response = await _executor.SendAsync(HttpMethod.Get, IndexesPath("/debug/identities"), null, token).ConfigureAwait(false);
        await using var stream = await response.Content.ReadAsStreamAsync(token).ConfigureAwait(false);
        using var json = await JsonDocument.ParseAsync(stream, default, token).ConfigureAwait(false);
        if (json.RootElement.ValueKind != JsonValueKind.Object)
        {
            throw new JackdawException("GET debug/identities answered something other than an object.");
        }
        return json.RootElement.EnumerateObject().ToDictionary(p => p.Name, p => p.Value.GetInt64(), StringComparer.Ordinal);
    }

    private async Task<long> ReadNumberAsync(HttpMethod method, string path, string property, CancellationToken token)
    {
        using var response = await _executor.SendAsync(method, path, null, token).ConfigureAwait(false);
        await using var stream = await response.Content.ReadAsStreamAsync(token).ConfigureAwait(false);
        using var json = await JsonDocument.ParseAsync(stream, default, token).ConfigureAwait(false);
        return json.RootElement.ValueKind == JsonValueKind.Object && json.RootElement.TryGetProperty(property, out var value) && value.TryGetInt64(out var number)
            ? number
            : throw new JackdawException($"{method} {path} answered without a number \"{property}\".");
    }
}
