import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { catchError, Observable, throwError } from 'rxjs';
import { PgErrorCode, pgErrorCode } from '../common/errors';
import { ProblemError, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../common/problem';


/**
 * A read of the log whose statement ran into the server's deadline (a locked or overloaded table)
 * answers 503 with Retry-After, like a database that does not answer at all, instead of a 500: the
 * caller (a verifier walking 10M leaves) should simply try again shortly.
 */
@Injectable()
export class StatementTimeoutInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      catchError((error: unknown) => {
        if (pgErrorCode(error) !== PgErrorCode.QueryCanceled) return throwError(() => error);
        return throwError(
          () =>
            new ProblemError(503, 'Service Unavailable', 'The database did not answer in time; try again shortly.', {
              headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) },
            }),
        );
      }),
    );
  }
}
