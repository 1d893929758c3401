namespace Jackdaw.Server.Security;

/// <summary>
/// What a client certificate may do across the server, in RavenDB's names (its clients send and
/// read these strings). <see cref="ClusterNode"/> exists for RavenDB's shape only: Jackdaw has no
/// cluster yet and never grants it.
/// </summary>
public enum SecurityClearance
{
    UnauthenticatedClients,
    ClusterAdmin,
    ClusterNode,
    Operator,
    ValidUser,
}

/// <summary>What a <see cref="SecurityClearance.ValidUser"/> may do in one database, in RavenDB's names.</summary>
public enum DatabaseAccess
{
    ReadWrite,
    Admin,
    Read,
}

/// <summary>
/// The least a caller needs for a route. Routes under <c>/databases/{name}/</c> name a database
/// access; the rest a server-wide clearance. Ordered from least to most for each kind.
/// </summary>
public enum RouteAccess
{
    /// <summary>Anyone, with or without a certificate (the version, the studio's static pages).</summary>
    Unauthenticated,

    /// <summary>Any registered, valid certificate.</summary>
    ValidUser,

    DatabaseRead,
    DatabaseReadWrite,
    DatabaseAdmin,
    Operator,
    ClusterAdmin,
}

/// <summary>
/// Declares the least <see cref="RouteAccess"/> of a routed handler method. Every routed method
/// carries one (the server refuses to start otherwise); <see cref="Template"/> narrows one to a
/// single template when a method serves several that need different access.
/// </summary>
[AttributeUsage(AttributeTargets.Method, AllowMultiple = true, Inherited = false)]
public sealed class AccessAttribute(RouteAccess access) : Attribute
{
    public RouteAccess Access { get; } = access;

    /// <summary>The one template this applies to; null: every route of the method.</summary>
    public string? Template { get; init; }

    /// <summary>The access <paramref name="template"/> of <paramref name="method"/> needs, or null when none is declared.</summary>
    public static RouteAccess? For(System.Reflection.MethodInfo method, string template)
    {
        RouteAccess? general = null;
        foreach (var attribute in method.GetCustomAttributes(typeof(AccessAttribute), inherit: false).Cast<AccessAttribute>())
        {
            if (attribute.Template == template)
            {
                return attribute.Access;
            }
            if (attribute.Template is null)
            {
                general = attribute.Access;
            }
        }
        return general;
    }
}

public static class RouteAccessExtensions
{
    /// <summary>True for the accesses checked against a database's permissions.</summary>
    public static bool IsDatabaseAccess(this RouteAccess access) => access is RouteAccess.DatabaseRead or RouteAccess.DatabaseReadWrite or RouteAccess.DatabaseAdmin;

    /// <summary>True when <paramref name="granted"/> allows what <paramref name="needed"/> asks in a database.</summary>
    public static bool Allows(this DatabaseAccess granted, RouteAccess needed) => needed switch
    {
        RouteAccess.DatabaseRead => true,
        RouteAccess.DatabaseReadWrite => granted is DatabaseAccess.ReadWrite or DatabaseAccess.Admin,
        RouteAccess.DatabaseAdmin => granted is DatabaseAccess.Admin,
        _ => false,
    };

    /// <summary>How many rights <paramref name="clearance"/> has, to compare two: ClusterAdmin > Operator > ValidUser.</summary>
    public static int Rank(this SecurityClearance clearance) => clearance switch
    {
        SecurityClearance.ClusterAdmin => 3,
        SecurityClearance.ClusterNode => 3,
        SecurityClearance.Operator => 2,
        SecurityClearance.ValidUser => 1,
        _ => 0,
    };
}
