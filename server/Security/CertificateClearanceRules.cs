using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Security;

/// <summary>
/// Who may register, edit or delete which client certificate, as RavenDB rules it: a ClusterAdmin
/// may do anything; an Operator only up to its own clearance: it never grants ClusterAdmin, and
/// never changes or deletes a ClusterAdmin certificate. (The certificate routes need Operator, so
/// a ValidUser never gets this far.) A refusal is an <see cref="AuthorizationException"/>: a 403.
/// </summary>
public static class CertificateClearanceRules
{
    /// <summary>Refuses when <paramref name="caller"/> may not give <paramref name="clearance"/> to the certificate <paramref name="name"/>.</summary>
    public static void EnsureMayGrant(Caller caller, SecurityClearance clearance, string name)
    {
        if (clearance.Rank() > caller.Clearance.Rank())
        {
            throw new AuthorizationException(false, $"The client certificate {caller.Describe()} has clearance {caller.Clearance}: it cannot give the certificate '{name}' clearance {clearance}. Only a ClusterAdmin can.");
        }
    }

    /// <summary>Refuses when <paramref name="caller"/> may not <paramref name="action"/> (edit, delete, replace) the registered <paramref name="existing"/>.</summary>
    public static void EnsureMayChange(Caller caller, CertificateDefinition existing, string action)
    {
        if (existing.Clearance.Rank() > caller.Clearance.Rank())
        {
            throw new AuthorizationException(false, $"The client certificate {caller.Describe()} has clearance {caller.Clearance}: it cannot {action} the certificate '{existing.Name}' ({existing.Thumbprint}), which has clearance {existing.Clearance}. Only a ClusterAdmin can.");
        }
    }
}
