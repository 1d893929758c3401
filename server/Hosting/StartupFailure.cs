using System.Net.Sockets;
using Microsoft.AspNetCore.Connections;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// A startup failure the user can fix, told in one line. Kestrel reports a port already taken as
/// an <see cref="IOException"/> ("Failed to bind to address http://127.0.0.1:8080: address already
/// in use.") around an <see cref="AddressInUseException"/>.
/// </summary>
internal static class StartupFailure
{
    public static bool IsAddressInUse(Exception? exception)
    {
        for (var e = exception; e is not null; e = e.InnerException)
        {
            if (e is AddressInUseException or SocketException { SocketErrorCode: SocketError.AddressAlreadyInUse })
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>
    /// "127.0.0.1:8080 is already in use; pass --urls http://127.0.0.1:PORT with a free PORT": the
    /// address Kestrel names, else the first one configured.
    /// </summary>
    public static string AddressInUse(Exception exception, string configuredUrls)
    {
        var named = exception.Message.Split(' ').Select(word => word.TrimEnd(':', '.')).FirstOrDefault(IsHttpUrl);
        var address = named ?? configuredUrls.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).FirstOrDefault() ?? configuredUrls;
        if (!Uri.TryCreate(address, UriKind.Absolute, out var url))
        {
            return $"{address} is already in use; pass --urls with a free port";
        }
        return $"{url.Host}:{url.Port} is already in use; pass --urls {url.Scheme}://{url.Host}:PORT with a free PORT";
    }

    private static bool IsHttpUrl(string word) =>
        Uri.TryCreate(word, UriKind.Absolute, out var url) && url.Scheme is "http" or "https";
}
