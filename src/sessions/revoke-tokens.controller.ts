import { Controller, HttpCode, Param, Post, Req } from '@nestjs/common';
import { ApiNoContentResponse, ApiNotFoundResponse, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { TargetUsers } from '../users/target-users';
import { adminActor, AdminChangeRecorder } from '../admin-changes/admin-change.recorder';
import { RecordsAdminChange } from '../admin-changes/admin-change-refusals';
import { ActionTypeId } from '../admin-changes/admin-change.types';
import { changesText } from '../admin-changes/changes';
import { LogoutReasonId } from '../sign-in-trail/audit.types';
import { Authenticated, CurrentPrincipal } from '../access/decorators';
import type { Principal } from '../access/principal';
import { requestContext } from '../common/request-context';
import { Permission } from '../access/permissions';
import { RegistryIdPipe } from '../users/registry-id.pipe';
import { SessionRevocation } from '../session-store/session-revocation.service';

/**
 * Revoke Sessions (service.md 3.2): every JWT of a user of the caller's own tenant ends; API keys stay.
 * A landlord administers every tenant (contract 6), as for the rest of the registry.
 */
@ApiTags('UserRegistry')
@Controller('api/UserRegistry')
export class RevokeTokensController {
  constructor(
    private readonly targets: TargetUsers,
    private readonly revocation: SessionRevocation,
    private readonly adminChanges: AdminChangeRecorder,
  ) {}

  @Post('RevokeTokens/:id')
  @RecordsAdminChange(ActionTypeId.TokensRevoked, 'UserRegistry', 'id')
  @HttpCode(204)
  @Authenticated({ permission: Permission.ReadWriteSecurityUser })
  @ApiNoContentResponse({ description: 'TokensValidFrom set, UserLogout row (ReasonId 2), the user\'s streams closed on every node.' })
  @ApiNotFoundResponse({ description: 'Unknown id, or a user of another tenant.' })
  async revoke(@Param('id', RegistryIdPipe) id: number, @CurrentPrincipal() caller: Principal, @Req() req: Request): Promise<void> {
    const user = await this.targets.find(caller, id);
    await this.revocation.revokeAll(
      { userRegistryId: user.id, userName: user.name, tenantRegistryId: user.tenantRegistryId },
      {
        reasonId: LogoutReasonId.AdministratorRevoked,
        context: requestContext(req),
        cutByUser: caller.userName,
        inTransaction: (tx, tokensValidFrom) =>
          this.adminChanges.record(tx, adminActor(caller, req), {
            actionType: ActionTypeId.TokensRevoked,
            targetTable: 'UserRegistry',
            targetId: user.id,
            targetName: user.name,
            targetTenantRegistryId: user.tenantRegistryId,
            changes: changesText({ tokensValidFrom: tokensValidFrom.before }, { tokensValidFrom: tokensValidFrom.after }),
          }),
      },
    );
  }
}
